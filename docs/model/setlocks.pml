/*
 * setlocks.pml -- SPIN model of a set's write through reflease's ref locks
 * on a local store, with writers that crash between the set's renames or
 * stall in them (issue 40: B71, B65, B73).
 *
 * Normative source: protocol.md §9 "Ref locks and crashed writers" and "The
 * bound after a crash"; lib/store/local.c local_cas_many. locks.pml checks
 * one ref's lock and its breaking against git's writer; this model checks
 * what a set adds: several locks per writer, taken in sorted order, every
 * compare under all of them, then one rename per member, and a crash (the
 * kernel drops every flock of the writer) possible before any rename.
 *
 * Two refs R0 < R1. Writer 1 and writer 2 write the set {R0, R1}, writer 3
 * R1 alone. Each writer: reads both refs (its expected values), then per
 * member in sorted order makes an owner file (complete, flock'ed: its inode
 * is IN(w, r)) and link()s it to the member's lock name, breaking a lock
 * whose flock nobody holds (two links: reflease's), or gives up (the 3 s
 * lock wait: every lock taken is removed, nothing written); compares every
 * member under all its locks (a mismatch: unlock all, nothing written);
 * then per member checks that the lock name is still its own file and
 * renames it onto the ref (the rename moves whatever the name denotes) or,
 * when it is not, settles by reading the ref; reports success when every
 * member holds its write. It may crash at any step, and stall for any time
 * (SPIN's interleavings). At most CRASHES crashes per run.
 *
 * Properties (asserts):
 *   PROP_WHOLE   a rename never publishes a half-written file
 *   PROP_CAS     whatever is published was decided by its writer's compare
 *                against the value it replaces, a rename reported 0 moved
 *                the writer's own file, and no two writers report success
 *                for writes from one value of a ref
 *   PROP_ATOMIC  a writer that did not crash published all of its members
 *                or none (all-or-nothing for every living writer)
 *   PROP_LIVE    (always on) once every writer has ended or crashed, every
 *                lock left is one the next writer breaks at once: no name
 *                is blocked by a dead writer's lock
 *   PROP_SUBSET  no ref holds a write of a set whose other member does not
 *                (B65: fails, a crash between the renames leaves a strict
 *                subset of refs written; readers take such a member for cut,
 *                held by no one: protocol.md "Sets", "A set cut by a crash")
 *   PROP_EXCL    (-DREADER) the reader's rule for a cut set (protocol.md
 *                "Sets", "A set cut by a crash"): never both a set writer
 *                and the taker of its member R0 report success
 *   PROP_STABLE  (-DREADER) T never writes over a member of a set that
 *                had landed whole, its writer's success reported, before T
 *                read it (a whole set stays held; only the microsecond race
 *                with a live writer between its renames may cost the set)
 *   PROP_FREE    (-DREADER) a member whose set writer died before its write
 *                reached the mate, the mate untouched since, is never judged
 *                held (a crash leaves nothing held)
 *
 * -DREADER replaces writer 2 by a taker T (writer 4): an acquire of R0
 * alone by another owner, as lib/lease/runtime.c decides it with
 * lib/lease/set.c's lease__set_cut_read: it reads R0; a set write's commit
 * there is held unless cut -- T reads the mate R1 and calls R0 cut when R1
 * is still at the oid the set write moved it from (the payload's set.from);
 * held: T gives up (exit 3); free (the initial value, or cut): T writes R0
 * through its lock like any writer, and after its write landed re-reads the
 * mate it found at the old oid (lease__set_cut_lost): moved -> `held`, not
 * a success. The set writer reads each member back after its last rename
 * (one ref at a time, as lease_fetch_refs does on a local store) and
 * succeeds only when every member shows its write.
 * Runs: docs/model/setlocks.runs.
 *   -DREADER -DPROP_EXCL -DPROP_STABLE -DPROP_FREE   hold (with
 *                         PROP_WHOLE, PROP_CAS, PROP_ATOMIC)
 *   -DREADER -DBROKEN_NOMATE  T frees any set member without reading the
 *                         mate (a write that reached its mates is freed):
 *                         PROP_STABLE fails (PROP_EXCL still holds: T's
 *                         re-read after its write answers held)
 *   -DREADER -DBROKEN_NOREREAD  T skips its re-read of the mate after its
 *                         write: a live set writer between its renames is
 *                         overtaken, both succeed: PROP_EXCL fails
 *   -DREADER -DBROKEN_TRUST  T trusts a cut member (held by its set, the
 *                         rule before issue 40): PROP_FREE fails
 *   -DREADER -DREACH_CUTTAKE / -DREACH_RACE  T takes a dead writer's cut
 *                         member and succeeds / T finds a live writer's
 *                         member cut and its re-read says held (not vacuous)
 *   correct               PROP_WHOLE, PROP_CAS, PROP_ATOMIC, PROP_LIVE hold
 *   -DPROP_SUBSET         fails: the finding (B65), not hidden
 *   -DBROKEN_NOBREAK      a dead writer's lock is never broken (B71 before
 *                         issue 40): PROP_LIVE fails
 *   -DBROKEN_AGE          a live set writer's lock broken by age alone while
 *                         it stalls between its renames (B73): PROP_CAS fails
 *   -DBROKEN_INTERLEAVE   each member compared and renamed in turn (no
 *                         compare of the whole set before the first
 *                         rename): PROP_ATOMIC fails
 *   -DREACH_CRASH         a crash between renames happens and a later writer
 *                         breaks a lock it left and writes (not vacuous)
 */

#ifndef CRASHES
#define CRASHES 1
#endif
#define NW 5          /* writers 1..3, and the taker T = 4 (-DREADER) */
#define NI 10         /* inodes: IN(w, r) = 2w + r, 2..9; 0 = none, 1 = the initial value */
#define IN(w, r) (2 * (w) + (r))
#define SETW(w) ((w) == 1 || (w) == 2) /* writers 1 and 2 write the set; 3 writes R1, T R0 */
#define TAKER 4

byte ref[2] = 1;        /* the inode whose content ref r holds (1: initial) */
byte lockp[2];          /* the file "<r>.lock" denotes (0 = none) */
bool complete[NI];      /* its content is written */
bool flocked[NI];       /* its writer holds its flock (alive) */
bool aged[NI];          /* BROKEN_AGE: old enough for an age-only breaker */
bool compared[NI];      /* its writer's compare passed */
byte expect[NI];        /* the value its writer read for that ref */
bool published[NI];     /* a rename put it onto its ref */
bool won[NI * 2];       /* a writer reported success over value v of ref r: won[2v + r] */
bool dead[NW];
byte ended = 0;         /* writers ended or crashed */
byte crashes = 0;
bool broke_dead = false; /* REACH_CRASH: a crashed set writer's lock was broken */
bool halfset = false;    /* REACH_CRASH: a crash between a set's renames */
bool setwon[3];          /* set writer w reported success (READER) */
bool twon = false;       /* T reported success on R0 (READER) */
bool tcut = false;       /* REACH_*: T found R0 cut */
bool tlost = false;      /* REACH_RACE: T's re-read found the mate moved */
bool tcutdead = false;   /* REACH_CUTTAKE: the cut T took was a dead writer's */

/* a rename of r's lock name onto r: publishes the file it denotes */
inline publish(r)
{
#ifdef PROP_WHOLE
	assert(complete[lockp[r]]);
#endif
#ifdef PROP_CAS
	assert(compared[lockp[r]] && ref[r] == expect[lockp[r]]);
#endif
	ref[r] = lockp[r];
	published[lockp[r]] = true;
	lockp[r] = 0
}

inline report(me, r)
{
#ifdef PROP_CAS
	assert(!won[2 * expect[IN(me, r)] + r]);
#endif
	won[2 * expect[IN(me, r)] + r] = true
}

/* a crash: the kernel drops every flock of the writer */
#define CRASH(me) :: atomic { crashes < CRASHES -> crashes++; dead[me] = true; \
                              flocked[IN(me, 0)] = false; flocked[IN(me, 1)] = false; \
                              halfset = halfset || (SETW(me) && published[IN(me, 0)]); ended++ }; goto gone

/* take the lock of member r (or give up: goto out) */
inline take(me, r)
{
	complete[IN(me, r)] = true; /* written and fsync'd into the owner file */
	flocked[IN(me, r)] = true;
	do
	:: atomic { lockp[r] == 0 -> lockp[r] = IN(me, r); break }
#ifndef BROKEN_NOBREAK
	:: atomic { lockp[r] != 0 && !flocked[lockp[r]] ->
	            broke_dead = broke_dead || dead[lockp[r] / 2]; lockp[r] = 0 }
#endif
#ifdef BROKEN_AGE
	:: atomic { lockp[r] != 0 && lockp[r] != IN(me, r) && aged[lockp[r]] -> lockp[r] = 0 }
#endif
	:: goto out /* the lock wait ran out: exit 75, nothing written */
	CRASH(me);
	od
}

/* the compare of member r under its lock */
#define MATCHES(me, r) (ref[r] == expect[IN(me, r)])

/* the rename of member r: still its own file, then rename; else settle */
inline commit(me, r)
{
	if
	:: lockp[r] == IN(me, r) ->
		if
		CRASH(me);
		:: true
		fi;
		atomic {
			if
			:: lockp[r] != 0 -> moved = lockp[r]; publish(r)
			:: else -> moved = 0
			fi;
#ifdef PROP_CAS
			assert(moved == 0 || moved == IN(me, r));
#endif
			flocked[IN(me, r)] = false
		}
	:: else -> flocked[IN(me, r)] = false /* open: settled by reading below */
	fi
}

proctype W(byte me)
{
	byte moved = 0;
	bool ok0;
	expect[IN(me, 0)] = ref[0];
	expect[IN(me, 1)] = ref[1];
#ifdef READER
	/* T's commit is held by T (it never releases here): the set acquire
	 * that reads it gives up, exit 3, nothing written */
	if :: SETW(me) && expect[IN(me, 0)] == IN(TAKER, 0) -> goto out :: else fi;
#endif
#ifdef BROKEN_INTERLEAVE
	/* per member: lock, compare, rename; a later member's failure leaves the earlier published */
	if :: SETW(me) -> take(me, 0);
		if :: MATCHES(me, 0) -> compared[IN(me, 0)] = true; commit(me, 0)
		   :: else -> goto out
		fi
	   :: else
	fi;
	take(me, 1);
	if :: MATCHES(me, 1) -> compared[IN(me, 1)] = true; commit(me, 1)
	   :: else -> goto out
	fi;
#else
	if :: SETW(me) -> take(me, 0) :: else fi;
	take(me, 1);
	if
	:: (!SETW(me) || MATCHES(me, 0)) && MATCHES(me, 1) ->
		compared[IN(me, 0)] = SETW(me); compared[IN(me, 1)] = true
	:: else -> goto out
	CRASH(me);
	fi;
	if :: SETW(me) -> commit(me, 0) :: else fi;
	commit(me, 1);
#endif
	/* success when every member holds its write (read back one ref at a
	 * time after the last rename: the set writer's re-read of R0) */
	if :: SETW(me) -> ok0 = (ref[0] == IN(me, 0)) :: else -> ok0 = true fi;
	atomic {
		if
		:: ok0 && ref[1] == IN(me, 1) ->
			if :: SETW(me) -> report(me, 0); setwon[me] = true :: else fi;
			report(me, 1);
#ifdef PROP_EXCL
			assert(!(SETW(me) && twon));
#endif
			skip
		:: else
		fi
	}
	goto fin;
out:	/* failure before any rename: every lock taken is removed */
	atomic {
		if :: lockp[0] == IN(me, 0) -> lockp[0] = 0 :: else fi;
		if :: lockp[1] == IN(me, 1) -> lockp[1] = 0 :: else fi;
		flocked[IN(me, 0)] = false;
		flocked[IN(me, 1)] = false
	}
fin:
#ifdef PROP_ATOMIC
	/* a living set writer published both members or neither */
	assert(!SETW(me) || published[IN(me, 0)] == published[IN(me, 1)]);
#endif
	ended++;
gone:
	skip
}

#ifdef READER
/* T: another owner's acquire of R0 alone (protocol.md "Sets", "A set cut
 * by a crash"; lib/lease/runtime.c lease__rt_decide, lib/lease/set.c) */
proctype T()
{
	byte me = TAKER;
	byte moved = 0;
	byte v, w = 0, from = 0;
	bool cut = false;
	bool wonbefore; /* ghost: a set writer had reported success before T's read */
	atomic { v = ref[0]; wonbefore = setwon[1] || setwon[2] };
	if
	:: v == IN(1, 0) -> w = 1
	:: v == IN(2, 0) -> w = 2
	:: else /* the initial value (free) */
	fi;
	if
	:: w != 0 ->
		/* a set write's live commit: held, unless cut */
		from = expect[IN(w, 1)]; /* the payload's set.from of the mate R1 */
#if defined(BROKEN_NOMATE)
		cut = true /* frees any set member, the mate unread */
#elif defined(BROKEN_TRUST)
		cut = false /* a set member is held by its set, cut or not */
#else
		cut = (ref[1] == from) /* the mate read: still at the old oid */
#endif
		;
		if
		:: !cut ->
			atomic {
#ifdef PROP_FREE
				/* held: never a dead writer's member whose mate its write
				 * never reached and nobody has written since */
				assert(!(dead[w] && !published[IN(w, 1)] && ref[1] == from));
#endif
				skip
			};
			goto out /* held: exit 3, nothing written */
		:: else -> tcut = true; tcutdead = dead[w]
		fi
	:: else
	fi;
	expect[IN(me, 0)] = v;
	take(me, 0);
	if
	:: MATCHES(me, 0) -> compared[IN(me, 0)] = true
	:: else -> goto out
	CRASH(me);
	fi;
	commit(me, 0);
	/* landed when R0 shows its write; then, for a cut member, the re-read
	 * of the mate it found at the old oid (lease__set_cut_lost) */
	if
	:: ref[0] == IN(me, 0) ->
#ifdef PROP_STABLE
		/* T's write replaced a set member: never one of a set that had
		 * landed whole and reported success before T looked */
		assert(!(w != 0 && wonbefore));
#endif
		atomic {
			if
#ifndef BROKEN_NOREREAD
			:: cut && ref[1] != from -> tlost = true /* held: the set write reached R1 */
#endif
			:: else ->
				report(me, 0);
				twon = true;
#ifdef PROP_EXCL
				assert(!setwon[1] && !setwon[2]);
#endif
				skip
			fi
		}
	:: else
	fi;
	goto fin;
out:
	atomic {
		if :: lockp[0] == IN(me, 0) -> lockp[0] = 0 :: else fi;
		flocked[IN(me, 0)] = false
	}
fin:
	ended++;
gone:
	skip
}
#endif

/* a lock file becomes old at any moment (BROKEN_AGE's breaker) */
#ifdef BROKEN_AGE
active proctype Aging()
{
end:
	do
	:: atomic { lockp[0] != 0 && !aged[lockp[0]] -> aged[lockp[0]] = true }
	:: atomic { lockp[1] != 0 && !aged[lockp[1]] -> aged[lockp[1]] = true }
	od
}
#endif

/* PROP_LIVE, PROP_SUBSET and the reach check, once every writer is done */
active proctype Monitor()
{
	atomic {
		ended == 3 -> /* the three processes ended or crashed */
#ifdef BROKEN_NOBREAK
		assert(lockp[0] == 0 && lockp[1] == 0);
#else
		assert(lockp[0] == 0 || !flocked[lockp[0]]);
		assert(lockp[1] == 0 || !flocked[lockp[1]]);
#endif
#ifdef PROP_SUBSET
		/* a set's write on R0 without its write on R1 (writers 1, 2) */
		assert(!(ref[0] == IN(1, 0) && ref[1] != IN(1, 1) && !published[IN(1, 1)]));
		assert(!(ref[0] == IN(2, 0) && ref[1] != IN(2, 1) && !published[IN(2, 1)]));
#endif
#ifdef REACH_CRASH
		assert(!(halfset && broke_dead));
#endif
#ifdef REACH_CUTTAKE
		assert(!(twon && tcut && tcutdead));
#endif
#ifdef REACH_RACE
		assert(!(tcut && tlost));
#endif
		skip
	}
}

init
{
	atomic {
		run W(1);
#ifdef READER
		run T();
#else
		run W(2);
#endif
		run W(3)
	}
}
