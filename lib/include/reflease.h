/**
 * @file reflease.h
 * The umbrella header of the reflease library: leases stored as git refs.
 * See docs/protocol.md for the protocol and the module headers for the API.
 */
#ifndef REFLEASE_H
#define REFLEASE_H

#include "reflease/common.h"
#include "reflease/heartbeat.h"
#include "reflease/migrate.h"
#include "reflease/object.h"
#include "reflease/primitives.h"
#include "reflease/queue.h"
#include "reflease/reconcile.h"
#include "reflease/runtime.h"
#include "reflease/schema.h"
#include "reflease/store.h"
#include "reflease/version.h"

#endif
