/*
 * Fair waiting (issue 28, protocol.md §5 "Fair waiting"): ticketed waiters
 * on one lease. Each waiter takes a ticket in one write as
 * lib/lease/queue.c does (issue 39 item 3) — read the store time, read
 * every ticket one at a time (no atomic snapshot), then create its ticket
 * with key = max(largest key read + 1, the store time read) — then reads the
 * queue one ticket at a time and CASes the lease only when no live ticket
 * comes before its own (key, id); after the CAS it deletes its ticket,
 * holds, and releases. A waiter may die at any step: its ticket stays, and
 * expires (live -> dead, never back).
 *
 * The store time is one clock that moves on past a ticket's key once the
 * ticket is written (the store's time base in ms). The key is the time
 * read BEFORE the write (as the code does: the listing's time), so two
 * waiters whose takings overlap may land keys in either order; two read at
 * once tie and are ordered by id.
 *
 * Properties (assertions):
 *   mutual exclusion: at most one holder;
 *   FIFO in the doorway sense (Lamport's bakery; the decision of
 *   protocol.md §5 "Fair waiting", issue 39): a waiter never takes the
 *   lease while a live ticket that was there when it began taking its own
 *   remains — a waiter whose ticket exists when another begins taking is
 *   served first; waiters whose takings overlap may be served in either
 *   order, so only they can pass a waiter (bounded overtaking, at most
 *   N - 1; no starvation) — and a waiter that begins taking while the
 *   lease is held is never keyed before that holder.
 * Broken variants: -DBROKEN_NOCHECK — a waiter that ignores older tickets;
 * -DBROKEN_NOMAX — a key not raised past the keys listed (a host whose
 * clock is behind the store's).
 */
#define N 3
#define ROUNDS 2
#define NONE 255

byte holder = NONE;       /* the lease: NONE = free */
byte nholders = 0;
bool exists[N];           /* ticket refs */
bool live[N];
byte key[N];              /* >= 1 (keyed when created) */
byte clock = 1;           /* store time */
byte hkey = 0;            /* the holder's key (ghost) */
bool arrived[N * N];      /* ghost: arrived[i*N+j] = j's ticket was there when i began taking */
byte lholder[N];          /* ghost: the holder when i began taking (NONE: free) */
byte lhkey[N];            /* ghost: ... and its key */

/* (key[j], j) < (k, i) */
#define BEFORE(j, k, i) (key[j] < (k) || (key[j] == (k) && (j) < (i)))

proctype waiter(byte me)
{
	byte r, j, m, k, ck;
	for (r : 1 .. ROUNDS) {
		/* take a ticket in one write: the store time, the listing, the create */
		atomic {
			ck = clock;
			for (j : 0 .. N - 1) { arrived[me * N + j] = exists[j] }
			lholder[me] = holder; lhkey[me] = hkey
		};
		m = 0;
		for (j : 0 .. N - 1) {
			atomic { if :: exists[j] && key[j] > m -> m = key[j] :: else -> skip fi }
		}
		atomic {
#ifdef BROKEN_NOMAX
			k = (ck > 1 -> ck - 1 : 1);
#else
			k = (m + 1 > ck -> m + 1 : ck);
#endif
			exists[me] = true; live[me] = true; key[me] = k;
			clock = (k + 1 > clock -> k + 1 : clock);
			for (j : 0 .. N - 1) { arrived[j * N + me] = false }
			/* a waiter that began taking while the lease was held is
			 * never keyed before that holder */
			assert(!(holder != NONE && holder != me && holder == lholder[me] &&
			         hkey == lhkey[me] && BEFORE(me, hkey, holder)))
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
				:: exists[j] && live[j] && BEFORE(j, key[me], me) ->
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
				/* FIFO at the CAS: no live ticket that was there when
				 * this waiter began taking its own */
				j = 0;
				do
				:: j < N -> assert(j == me || !(arrived[me * N + j] && exists[j] && live[j])); j++
				:: j == N -> break
				od;
				holder = me; hkey = key[me]; nholders++;
				assert(nholders == 1)
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
