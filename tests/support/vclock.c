/* A virtual clock for tests (vclock.h): atomics, so a store's threads (the
 * fake server's, a heartbeat service's) may read and sleep on it at once. */
#include "vclock.h"

#include <time.h>

void vclock_init(vclock *v, int64_t wall_s)
{
	v->wall0_s = wall_s ? wall_s : (int64_t)time(NULL);
	v->mono_ms = VCLOCK_START_MS;
	v->slept_ms = 0;
	v->sleeps = 0;
}

int64_t vclock_mono_ms(vclock *v)
{
	return __atomic_load_n(&v->mono_ms, __ATOMIC_SEQ_CST);
}

int64_t vclock_ms_cb(void *payload)
{
	return vclock_mono_ms(payload);
}

void vclock_advance(vclock *v, int64_t ms)
{
	if (ms > 0)
		__atomic_add_fetch(&v->mono_ms, ms, __ATOMIC_SEQ_CST);
}

static int64_t v_now(void *payload)
{
	vclock *v = payload;

	return v->wall0_s + (vclock_mono_ms(v) - VCLOCK_START_MS) / 1000;
}

static int v_sleep(int64_t ms, int interruptible, void *payload)
{
	vclock *v = payload;

	(void)interruptible;
	vclock_advance(v, ms);
	__atomic_add_fetch(&v->slept_ms, ms, __ATOMIC_SEQ_CST);
	__atomic_add_fetch(&v->sleeps, 1, __ATOMIC_SEQ_CST);
	return 0;
}

void vclock_apply(vclock *v, lease_clock *c, int with_wall)
{
	c->payload = v;
	c->now = with_wall ? v_now : NULL;
	c->mono_ms = vclock_ms_cb;
	c->sleep_ms = v_sleep;
}
