/*
 * slots.pml -- SPIN model of N-slot leases (protocol.md "Slots", issue 27).
 *
 * Each slot NAME@iofN is an ordinary lease; lease.pml checks one lease ref
 * (a holder's exclusion, fencing, settling).  Here a slot ref is abstracted
 * to its compare-and-swap: 0 = free (absent or released), else the holder's
 * id.  What this model checks is what the slots add on top: the count.
 *
 * Refs: a region per slot count C (C = 2 at refs 0..2, C = 3 at refs 3..6);
 * each region has one ref more than C, the ref no correct acquirer touches
 * (slot C+1 of C).  A client of count C:
 *   1. lists every ref of the other regions (one read each, not atomic):
 *      one not free is a configuration error -> done;
 *   2. tries the C slots of its region once, from a start it picks, each by
 *      CAS free -> me (the first success wins; all held -> done);
 *   3. lists the other regions again; one not free -> release its slot
 *      (CAS me -> free), done;
 *   4. holds (critical section), then releases.
 * A client may start again after it is done (at most ROUNDS times).
 *
 * Exactly one property per run (assertions, pan -DSAFETY):
 *   -DPROP_N    clients of count 2 only: never more than 2 hold at once
 *   -DPROP_MIX  clients of counts 2 and 3: never holders of both counts at
 *               once, and never more than C of count C
 * Broken variants (each must produce a counterexample):
 *   -DBROKEN_SLOT        off-by-one slot check: slots 1..C+1 are tried
 *                        (with PROP_N)
 *   -DBROKEN_NOPOSTCHECK no listing after the write (step 3), with PROP_MIX
 * Reach checks (deliberate assert(!X) that must fail: X is reachable):
 *   -DREACH_FULL   2 clients of count 2 hold at once (the bound is met)
 *   -DREACH_BACKOFF a client of one count backs off after its write (step 3)
 */

#ifndef ROUNDS
#define ROUNDS 2
#endif
#ifndef REACH_FULL
#define REACH_FULL 0
#endif
#ifndef REACH_BACKOFF
#define REACH_BACKOFF 0
#endif

#define NREFS 7
#define NONE 255

byte ref[NREFS];  /* 0 = free, else the holder's id (1..) */
byte held[4];     /* holders in their critical section, by count (2, 3) */
bit backedoff;    /* a client released its slot after the post-write listing */

/* region of count c: refs base(c) .. base(c) + c (the last one: slot c+1) */
#define BASE(c) ((c) == 2 -> 0 : 3)

inline other_held(c, j, found) {
	found = 0;
	j = 0;
	do
	:: j < NREFS ->
		if
		:: (j < BASE(c) || j > BASE(c) + c) && ref[j] != 0 -> found = 1
		:: else -> skip
		fi;
		j++
	:: else -> j = 0; break /* reset: fewer states, nothing lost */
	od
}

inline check() {
#ifdef PROP_N
	assert(held[2] <= 2);
#endif
#ifdef PROP_MIX
	assert(held[2] <= 2 && held[3] <= 3 && !(held[2] > 0 && held[3] > 0));
#endif
	assert(!(REACH_FULL && held[2] == 2) && !(REACH_BACKOFF && backedoff))
}

proctype client(byte me; byte c)
{
	byte j, k, start, i, got, rounds = 0;
	bit found;

again:
	got = NONE;
	/* 1. the other counts' refs, before the round */
	other_held(c, j, found);
	if
	:: found -> found = 0; goto done
	:: else -> skip
	fi;
	/* 2. one round from a start of its own */
	if
	:: start = 0
	:: start = 1
	:: c == 3 -> start = 2
	fi;
	k = 0;
	do
#ifdef BROKEN_SLOT
	:: k <= c ->
		i = BASE(c) + (start + k) % (c + 1);
#else
	:: k < c ->
		i = BASE(c) + (start + k) % c;
#endif
		atomic {
			if
			:: ref[i] == 0 -> ref[i] = me; got = i
			:: else -> skip
			fi
		}
		if
		:: got != NONE -> break
		:: else -> k++
		fi
	:: else -> break
	od;
	k = 0;
	i = 0;
	start = 0;
	if
	:: got == NONE -> goto done
	:: else -> skip
	fi;
#ifndef BROKEN_NOPOSTCHECK
	/* 3. the other counts' refs again, after the write */
	other_held(c, j, found);
	if
	:: found ->
		atomic { assert(ref[got] == me); ref[got] = 0 };
		backedoff = 1;
		check();
		found = 0;
		got = NONE;
		goto done
	:: else -> skip
	fi;
#endif
	/* 4. hold, then release */
	atomic { held[c]++; check() };
	atomic { held[c]--; assert(ref[got] == me); ref[got] = 0; got = NONE };
done:
	rounds++;
	if
	:: rounds < ROUNDS -> goto again
	:: true -> skip
	fi
}

init {
	atomic {
#ifdef PROP_MIX
		run client(1, 2);
		run client(2, 2);
		run client(3, 3);
#else
		run client(1, 2);
		run client(2, 2);
		run client(3, 2);
#endif
	}
}
