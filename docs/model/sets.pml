/*
 * sets.pml -- SPIN model of the set write of reflease (issue 27).
 *
 * Normative source: protocol.md "Sets": a set acquire reads every member,
 * and when every one is free writes them all in ONE atomic compare-and-swap
 * of the store (local: git's ref locks for the whole set, sorted; github:
 * one updateRefs mutation); nothing is held while waiting; release of a set
 * is one atomic write too. docs/model/README.md ("Sets") says what is
 * abstracted: time and expiry (lease.pml covers a single lease's TTL,
 * takeover and settling; a set member is taken over by exactly those
 * rules), tokens (a member's holder stands for its current token).
 *
 * Three leases L0 L1 L2; client 1 takes the set {L0, L1}, client 2 the set
 * {L1, L2} (they overlap in L1), client 3 the single lease {L2}. Each
 * client takes its set ROUNDS times, each time: read the members one by
 * one (reads interleave with other writes), wait while one is held, write
 * the set from the oids read, hold it (the critical section), release it.
 *
 * Properties (each run checks the asserts and invalid end states):
 *   exclusion   no two clients whose sets overlap are in their critical
 *               sections together, and a client in its critical section is
 *               every member's holder
 *   no partial  a client holds either none or all of its set's members
 *               (monitor, at every state)
 *   progress    no deadlock: every client ends its rounds (SPIN's invalid
 *               end states)
 * Broken variants (each must produce a counterexample):
 *   -DBROKEN_NONATOMIC  the set written as one CAS per member; a later
 *                       member's failed CAS leaves the earlier ones written
 *   -DBROKEN_HOLDWAIT   the set taken member by member, waiting for a held
 *                       member while holding the earlier ones
 *   -DBROKEN_REFUSED_REBASE  a set write the store refused (issue 38) sent
 *                       again from the oids read anew, without deciding
 *                       again (the engine sends the same CAS, from the
 *                       same oids, only while a re-read shows nothing moved)
 * Reach checks: -DREACH_CONFLICT asserts a set write never fails its compare
 * (it must fail: the interleavings that matter happen); -DREACH_RESENT
 * asserts a refused set write never applies when sent again (it must).
 *
 * Refusals (issue 38, protocol.md §5 "Refused while nothing moved"): the
 * store may refuse a set write that would apply (REFUSALS per client),
 * applying nothing; the client reads again and sends the same CAS while no
 * member moved, else decides again. Time (the backoff) is abstracted.
 */

#ifndef ROUNDS
#define ROUNDS 1 /* rounds per client: each retries until it holds its set; 2 rounds take 47 M states, 2.5 GB */
#endif
#define NL 3   /* leases */
#define NC 4   /* clients 1..3 (0 = nobody) */

byte holder[NL];   /* 0 = free, else the client holding it */
byte ver[NL];      /* the ref's oid, abstracted: bumped by every write */
bool in_cs[NC];
bool conflict_seen;
bool resent_ok;    /* a refused set write, sent again as it was, applied */

#ifndef REFUSALS
#define REFUSALS 1 /* set writes the store refuses per client while nothing moved */
#endif

/* membership: client c's set */
#define IN(c, l) ((c == 1 && (l == 0 || l == 1)) || (c == 2 && (l == 1 || l == 2)) || \
                  (c == 3 && l == 2))
#define SZ(c) (c == 3 -> 1 : 2)
#define OVERLAP(a, b) ((a != b) && ((IN(a,0) && IN(b,0)) || (IN(a,1) && IN(b,1)) || \
                                    (IN(a,2) && IN(b,2))))
#define HELD(c) ((holder[0] == c) + (holder[1] == c) + (holder[2] == c))

/* the monitor: no partial hold, at every state */
active proctype monitor()
{
	assert(HELD(1) == 0 || HELD(1) == SZ(1));
	assert(HELD(2) == 0 || HELD(2) == SZ(2));
	assert(HELD(3) == 0 || HELD(3) == SZ(3));
	assert(!(in_cs[1] && in_cs[2]) && !(in_cs[2] && in_cs[3]))
}

/* every member of client c's set still at the oid the client read */
#define UNMOVED(c) ((!IN(c,0) || ver[0] == seen[0]) && (!IN(c,1) || ver[1] == seen[1]) && \
                    (!IN(c,2) || ver[2] == seen[2]))

proctype client(byte me)
{
	byte r = 0, l, seen[NL], refused = 0;
	bool ok, was_refused;

	do
	:: r == ROUNDS -> break
	:: r < ROUNDS ->
#ifdef BROKEN_HOLDWAIT
		/* member by member, each a CAS from a free state, holding the
		 * earlier ones while waiting for the next */
		l = 0;
		do
		:: l == NL -> break
		:: l < NL && !IN(me, l) -> l++
		:: l < NL && IN(me, l) ->
			atomic { holder[l] == 0 -> holder[l] = me; ver[l]++ };
			l++
		od;
		ok = true;
#else
		/* read every member, one read per step */
		l = 0;
		do
		:: l == NL -> break
		:: l < NL -> seen[l] = ver[l]; l++
		od;
		/* a held member: wait for a change, holding nothing */
		if
		:: (IN(me,0) && holder[0] != 0) || (IN(me,1) && holder[1] != 0) ||
		   (IN(me,2) && holder[2] != 0) ->
			/* wake on a change of a member (lease_wait_ref_change) */
			(!IN(me,0) || ver[0] != seen[0] || holder[0] == 0) &&
			(!IN(me,1) || ver[1] != seen[1] || holder[1] == 0) &&
			(!IN(me,2) || ver[2] != seen[2] || holder[2] == 0);
			goto next
		:: else -> skip
		fi;
#ifdef BROKEN_NONATOMIC
		/* one CAS per member: a later failure leaves the earlier written */
		ok = true;
		l = 0;
		do
		:: l == NL -> break
		:: l < NL && (!IN(me, l) || !ok) -> l++
		:: l < NL && IN(me, l) && ok ->
			atomic {
				if
				:: ver[l] == seen[l] -> holder[l] = me; ver[l]++
				:: else -> ok = false
				fi
			};
			l++
		od;
#else
		/* ONE atomic compare-and-swap of the whole set (cas_many) */
cas:		atomic {
			if
			:: refused < REFUSALS && UNMOVED(me) ->
				/* the store refuses it (a ruleset, a limit, a server
				 * fault): nothing applied, outcome known (issue 38) */
				refused++; was_refused = true; ok = false
			:: UNMOVED(me) ->
				l = 0;
				do
				:: l == NL -> break
				:: l < NL && IN(me, l) -> holder[l] = me; ver[l]++; l++
				:: l < NL && !IN(me, l) -> l++
				od;
				ok = true;
				resent_ok = resent_ok || refused > 0
			:: else -> ok = false; conflict_seen = true
			fi
		};
#ifdef REACH_CONFLICT
		assert(!conflict_seen);
#endif
#ifdef REACH_RESENT
		assert(!resent_ok);
#endif
		if
		:: was_refused ->
			was_refused = false;
#ifdef BROKEN_REFUSED_REBASE
			/* the refused write sent again from the oids read anew,
			 * without deciding again */
			l = 0;
			do
			:: l == NL -> break
			:: l < NL -> seen[l] = ver[l]; l++
			od;
			goto cas
#else
			/* read again: nothing moved, the same CAS (the commits
			 * already written) again; a member moved, decide again */
			if
			:: UNMOVED(me) -> goto cas
			:: else -> goto next
			fi
#endif
		:: else -> skip
		fi;
#endif
		if
		:: !ok -> goto next
		:: else -> skip
		fi;
#endif
		/* the critical section */
		in_cs[me] = true;
		assert(HELD(me) == SZ(me));
		assert(!(in_cs[1] && in_cs[2]) && !(in_cs[2] && in_cs[3]));
		in_cs[me] = false;
		/* release: one atomic write of the whole set */
		atomic {
			l = 0;
			do
			:: l == NL -> break
			:: l < NL && IN(me, l) -> holder[l] = 0; ver[l]++; l++
			:: l < NL && !IN(me, l) -> l++
			od
		};
		r++;
next:		skip
	od
}

init
{
	atomic { run client(1); run client(2); run client(3) }
}
