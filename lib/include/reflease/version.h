/**
 * @file version.h
 * Schema and library versions (protocol.md §2): the payload schema version
 * this build writes, and the library's own version.
 */
#ifndef REFLEASE_VERSION_H
#define REFLEASE_VERSION_H

/** The payload schema version this build writes (protocol.md §2). */
#define SDLC_VERSION       "1.2.0"
#define SDLC_VERSION_MAJOR 1
#define SDLC_VERSION_MINOR 2
#define SDLC_VERSION_PATCH 0

#ifndef REFLEASE_VERSION
#define REFLEASE_VERSION "0.1.0"
#endif

#endif
