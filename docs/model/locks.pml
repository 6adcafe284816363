/*
 * locks.pml -- SPIN model of reflease's ref lock on a local store and of
 * breaking it (issue 40: B71, B73).
 *
 * Normative source: protocol.md §9 "Ref locks and crashed writers". One ref;
 * its lock name "<ref>.lock" (lockp: the inode the name denotes, 0 = none).
 * Each reflease writer W (1, 2): reads the ref (its expected value), makes
 * an owner file (inode = its id) holding its content, complete, and takes
 * its flock; link()s it to the lock name (atomic, only when the name is
 * free); else may break the lock at the name when nobody holds that file's
 * flock and it is reflease's (two links) or old (a foreign lock), holding
 * the flock itself while it unlinks; compares under the lock; checks that
 * the lock name is still its own file; renames the lock name onto the ref
 * (a rename moves whatever file the name denotes then; 0 = success), or,
 * when the name is no longer its file, settles by reading the ref. A writer may crash at any
 * step (its flock goes: the kernel closes its files) or stall for any time
 * (SPIN's interleavings). A lock becomes "old" at any moment (aging).
 * -DFOREIGN adds a git writer G (3): O_EXCL create (content written after),
 * compare, rename by name, no flock, no checks.
 *
 * Properties (asserts):
 *   PROP_WHOLE  a rename never publishes a half-written file
 *   PROP_CAS    whatever is published was decided by its writer's compare
 *               against the value it replaces, and no two writers report
 *               success for writes from the same value (never two writers
 *               both believing they wrote)
 * Runs: docs/model/locks.runs.
 *   correct                 both hold (reflease writers, crashes, stalls)
 *   -DBROKEN_AGE            a live writer's lock broken by age alone (the
 *                           old reconcile --reap, B73): PROP_CAS fails
 *   -DFOREIGN -DBROKEN_GITORDER  content written after the lock (git's
 *                           order) by reflease too: PROP_WHOLE fails
 *   -DFOREIGN               PROP_WHOLE holds; PROP_CAS fails: the documented
 *                           limit (a git writer stalled 60 s in its window)
 */

#define NI 4 /* inodes 1..3, one per writer (0 = none) */

byte ref = 0;      /* whose content the ref holds (0: the initial value) */
byte lockp = 0;    /* the file "<ref>.lock" denotes */
bool complete[NI]; /* its content is written */
bool flocked[NI];  /* its writer holds its flock (alive) */
bool ours[NI];     /* two links: a reflease lock */
bool aged[NI];     /* old enough to break as a foreign lock */
bool compared[NI]; /* its writer's compare passed */
byte expect[NI];   /* the value its writer read */
bool won[NI];      /* a writer reported success over this value */
byte moved[NI];    /* the file a writer's rename moved (0: none) */
bool crashed = false;
bool broke[NI]; /* REACH_BREAK: this writer removed a lock */

/* a rename of the lock name onto the ref: publishes the file it denotes */
inline publish()
{
#ifdef PROP_WHOLE
	assert(complete[lockp]);
#endif
#ifdef PROP_CAS
	assert(compared[lockp] && ref == expect[lockp]);
#endif
	ref = lockp;
	lockp = 0
}

inline success(me)
{
#ifdef PROP_CAS
	/* a rename reported 0 moved this writer's own file */
	assert(moved[me] == 0 || moved[me] == me);
#endif
#ifdef REACH_BREAK
	assert(!broke[me]);
#endif
#ifdef PROP_CAS
	assert(!won[expect[me]]);
#endif
	won[expect[me]] = true
}

/* a crash (at most one per run): the kernel drops the writer's flock */
#define CRASH(me) :: atomic { !crashed -> crashed = true; flocked[me] = false }; goto done

proctype W(byte me)
{
	expect[me] = ref;
#ifdef BROKEN_GITORDER
	complete[me] = false;
#else
	complete[me] = true; /* written and fsync'd into the owner file */
#endif
	ours[me] = true;
	flocked[me] = true;
	do
	:: atomic { lockp == 0 -> lockp = me; break }
	:: atomic { lockp != 0 && lockp != me && !flocked[lockp] && (ours[lockp] || aged[lockp]) ->
	            lockp = 0; broke[me] = true }
#ifdef BROKEN_AGE
	:: atomic { lockp != 0 && lockp != me && aged[lockp] -> lockp = 0 }
#endif
	CRASH(me);
	od;
	complete[me] = true; /* git's order: written under the lock */
	if
	:: ref == expect[me] -> compared[me] = true
	:: else -> atomic { if :: lockp == me -> lockp = 0 :: else fi; flocked[me] = false }; goto done
	CRASH(me);
	fi;
	if
	:: lockp == me -> /* still its own file: rename (a window before it) */
		if
		CRASH(me);
		:: true
		fi;
		/* the rename moves whatever the name denotes; 0 = success */
		atomic { if :: lockp != 0 -> moved[me] = lockp; publish() :: else fi };
		atomic { if :: moved[me] != 0 -> success(me) :: else fi; flocked[me] = false }
	:: else -> /* open: settled by reading the ref */
		atomic { if :: ref == me -> success(me) :: else fi; flocked[me] = false }
	fi;
done:
	skip
}

#ifdef FOREIGN
proctype G()
{
	byte me = 3;
	expect[me] = ref;
	if
	:: atomic { lockp == 0 -> lockp = me }
	:: goto gone /* git gives up waiting for a held lock (100 ms) */
	fi;
	complete[me] = true;
	if
	:: ref == expect[me] -> compared[me] = true;
		atomic { if :: lockp != 0 -> publish() :: else fi }
	:: else -> atomic { if :: lockp == me -> lockp = 0 :: else fi }
	fi;
gone:
	skip
}
#endif

/* a lock file becomes old at any moment */
active proctype Aging()
{
end:
	do
	:: atomic { lockp != 0 && !aged[lockp] -> aged[lockp] = true }
	od
}

init
{
	atomic {
		run W(1);
		run W(2);
#ifdef FOREIGN
		run G();
#endif
	}
}
