/*
 * Fair waiting (issue 28, protocol.md §5 "Fair waiting"): ticketed waiters
 * on one lease. Each waiter takes a ticket as lib/lease/queue.c does —
 * create it "choosing" (key 0), read every other ticket one at a time (no
 * atomic snapshot), write key = max(largest key read + 1, store time) — then
 * reads the queue again one ticket at a time and CASes the lease only when
 * no live ticket is choosing or comes before its own (key, id); after the
 * CAS it deletes its ticket, holds, and releases. A waiter may die at any
 * step: its ticket stays, and expires (live -> dead, never back).
 *
 * The store time is one clock that moves on between two key writes (the
 * store's time base in ms; protocol.md states the same-ms tie as the
 * residual case, ordered by id).
 *
 * Properties (assertions):
 *   mutual exclusion: at most one holder;
 *   FIFO: when a waiter takes the lease, no live keyed ticket comes before
 *   its own, and no ticket that existed then is later keyed before it while
 *   it still holds.
 * Broken variant: -DBROKEN_NOCHECK — a waiter that ignores older tickets.
 */
#define N 3
#define ROUNDS 2
#define NONE 255

byte holder = NONE;       /* the lease: NONE = free */
byte nholders = 0;
bool exists[N];           /* ticket refs */
bool live[N];
byte key[N];              /* 0 = choosing */
byte clock = 1;           /* store time */
byte hkey = 0;            /* the holder's key (ghost) */
bool before_acq[N];       /* ghost: ticket existed when the holder took the lease */

/* (key[j], j) < (k, i) */
#define BEFORE(j, k, i) (key[j] < (k) || (key[j] == (k) && (j) < (i)))

proctype waiter(byte me)
{
	byte r, j, m, k;
	for (r : 1 .. ROUNDS) {
		/* take a ticket: choosing */
		atomic { exists[me] = true; live[me] = true; key[me] = 0; before_acq[me] = (holder != NONE) };
		m = 0;
		for (j : 0 .. N - 1) {
			atomic { if :: exists[j] && key[j] > m -> m = key[j] :: else -> skip fi }
		}
		atomic {
			k = (m + 1 > clock -> m + 1 : clock);
			clock = k + 1;
			key[me] = k;
			/* FIFO (ghost): a ticket that existed when the holder took
			 * the lease is never keyed before the holder's */
			assert(!(holder != NONE && holder != me && before_acq[me] && BEFORE(me, hkey, holder)));
		}
check:
		j = 0;
		do
		:: j == N -> break
		:: j < N && j == me -> j++
		:: j < N && j != me ->
			atomic {
				if
#ifndef BROKEN_NOCHECK
				:: exists[j] && live[j] && (key[j] == 0 || BEFORE(j, key[me], me)) ->
					j = 0 /* wait and read again */
#endif
				:: else -> j++
				fi
			}
		:: atomic { live[me] -> live[me] = false }; goto dead /* dies while waiting */
		od;
		atomic {
			if
			:: holder == NONE ->
				/* FIFO at the CAS: no live keyed ticket before ours */
				j = 0;
				do
				:: j < N -> assert(j == me || !(exists[j] && live[j] && key[j] != 0 && BEFORE(j, key[me], me))); j++
				:: j == N -> break
				od;
				holder = me; hkey = key[me]; nholders++;
				assert(nholders == 1);
				for (j : 0 .. N - 1) { before_acq[j] = exists[j] }
			:: holder != NONE -> goto check
			fi
		};
		atomic { exists[me] = false; live[me] = false };  /* deleted after the acquire */
		atomic { nholders--; holder = NONE; hkey = 0 }     /* release */
	}
	goto done;
dead:
	/* its ticket stays (expired); a later reap deletes it */
	if :: atomic { exists[me] = false } :: skip fi;
done:
	skip
}

init {
	atomic { run waiter(0); run waiter(1); run waiter(2) }
}
