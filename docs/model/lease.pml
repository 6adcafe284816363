/*
 * lease.pml -- SPIN model of the reflease lease protocol.
 *
 * Normative source: protocol.md section 3 (CAS primitives, verify window),
 * section 4 (time, skew margin), section 5 (operation table, owner-keyed
 * rotation matrix, settling rule), section 6 (heartbeat floor).
 * docs/model/README.md explains what is modelled and what is abstracted.
 *
 * One lease ref, a CAS store, three clients, a shared discrete clock.
 *   client 0 and client 1 share one identity (owner+host): two processes of
 *   the same user on the same host; client 2 has another identity.  `moved`
 *   and `other` behave identically in every cell of the section 5 table, so
 *   one foreign identity covers both.
 *
 * Exactly one property is checked per run (assertions, pan -DSAFETY):
 *   -DPROP_A  (a) no two clients act under a current, unexpired token in the
 *             same time step (fencing form of mutual exclusion)
 *   -DPROP_B  (b) a release never frees a lease whose current token is not
 *             the releaser's
 *   -DPROP_C  (c) transitions never decreases along the ref's history
 *   -DPROP_D  (d) every write reported as success is in the ref's history,
 *             and every write reported as known-not-applied is not
 *   -DPROP_E  (e) a client that believes it holds the lease (its deadline
 *             not passed) holds the current, unexpired token (belief form)
 * Broken variants (each must produce a counterexample):
 *   -DBROKEN_DELCREATE   takeover by delete-then-create
 *   -DBROKEN_NOLAG       settling by "ref equals old => not applied", no window
 *   -DBROKEN_SAMEID      acquire without a token admitted on a live lease of
 *                        the same identity (token preserved)
 *   -DBROKEN_RELOWNER    release admitted by identity instead of token
 *   -DBROKEN_SETTLEMOVED settling by "ref moved from old => landed"
 * Finding: -DVARTTL lets client 0 grant TTL or TTL+1 per write; with PROP_E
 * the protocol as written fails, -DFIX_SHORTTTL is the proposed fix.
 */

/* Reach checks (-DREACH_X): a deliberate "assert(!X)" that must FAIL, showing
 * that the scenario X is reachable, so the properties are not vacuous:
 *   REACH_TAKEOVER   an acquire succeeds by taking over an expired live lease
 *   REACH_SETTLED    a lost response is settled into a success
 *   REACH_LOSTSINCE  settling finds the write landed and the lease lost since
 *   REACH_NOTDUE     a heartbeat answers not_due without a write
 *   REACH_REPLACED   a heartbeat replaces a heartbeat (protocol.md section 2,
 *                    issue 29; needs OPS >= 3: acquire and two heartbeats) */
#ifndef REACH_TAKEOVER
#define REACH_TAKEOVER 0
#endif
#ifndef REACH_SETTLED
#define REACH_SETTLED 0
#endif
#ifndef REACH_LOSTSINCE
#define REACH_LOSTSINCE 0
#endif
#ifndef REACH_NOTDUE
#define REACH_NOTDUE 0
#endif
#ifndef REACH_REPLACED
#define REACH_REPLACED 0
#endif
#define REACH(c) assert(!(c))

/* a replacing heartbeat keeps the replaced one's TTL (section 2) */
#ifdef VARTTL
#define SAMETTL(r) (C[r].ttl == WTTL)
#else
#define SAMETTL(r) 1
#endif

/* ---- bounds (override with -D) ---- */
#ifndef TTL
#define TTL 2     /* lease TTL, time units */
#endif
#ifndef SKEW
#define SKEW 0    /* skew margin: expired for takeover when now > exp + SKEW */
#endif
#ifndef LAG
#define LAG 0     /* reads may return a tip superseded at most LAG units ago */
#endif
#ifndef MAXT
#define MAXT 4    /* the clock stops here */
#endif
#ifndef OPS
#define OPS 2     /* operations per client */
#endif
#ifndef TRIES
#define TRIES 2   /* read-decide-write attempts per operation */
#endif
#define MAXC 16   /* commit slots; slot 0 = "ref absent" */
#ifdef VARTTL
/* client 0's writes of a live phase grant TTL or TTL+1 (the --ttl option,
 * section 6); the others always TTL */
#define WTTL wttl
#define CTTL(c) C[c].ttl
#else
#define WTTL TTL
#define CTTL(c) TTL
#endif
#define HALF (WTTL / 2) /* success needs expires_at - now >= ttl/2 (section 5) */
#define FLOOR 1        /* heartbeat floor: max(1, ttl/10) (section 6) */

/* phases */
#define REL 0
#define CLAIMED 1
#define WORKING 2

/* operations */
mtype = { release, reacquire, transition, heartbeat, acquire };
#define ACQUIRE acquire
#define HEARTBEAT heartbeat
#define TRANSITION transition
#define REACQUIRE reacquire
#define RELEASE release

/* decisions of read-decide-write */
mtype = { write_released, preserve, rotate, mint, no_write };
#define D_NONE no_write  /* answer without a write */
#define D_MINT mint
#define D_ROTATE rotate
#define D_PRESERVE preserve
#define D_RELEASE write_released

typedef Commit {
	byte owner;  /* identity of the writer (owner, host) */
	byte tok;    /* lease_token; tokens are numbered, 0 = none */
	byte trans;  /* transitions */
	byte phase;
	byte exp;    /* expires_at */
	byte parent; /* the commit's parent: the commit the ref pointed at before
	              * (0 = created), or that commit's parent when a heartbeat
	              * replaced a heartbeat (section 2; -DAPPEND_HEARTBEATS: never) */
	bit hb;      /* written by a heartbeat */
	bit applied; /* the store applied this write (ghost) */
#ifdef VARTTL
	byte ttl;    /* ttl_seconds */
#endif
};

Commit C[MAXC];
byte ncommit = 1; /* next free commit slot */
byte tokctr = 0;  /* last token minted */
byte tip = 0;     /* the lease ref; 0 = absent */
byte now = 0;     /* the store's shared clock */

/* read lag: the last two superseded tips, readable while
 * until + LAG >= now (the store's replication window) */
byte prev1, prev2, until1, until2;
bit v1, v2;

#ifdef PROP_A
#define NOT_ACTED ((acted & (1 << me)) == 0)
byte acted = 0; /* clients that acted under a current, unexpired token this time step */
#endif
#ifndef PROP_A
#define NOT_ACTED true
#endif
#ifdef PROP_C
byte lasttrans = 0;
#endif

/* ---------------------------------------------------------------- store */

/* the ref moves to n (0 = deleted); monitor (c) */
inline settip(n) {
	prev2 = prev1; until2 = until1; v2 = v1;
	prev1 = tip; until1 = now; v1 = 1;
	tip = n;
#ifdef PROP_C
	if
	:: n != 0 ->
		assert(C[n].trans >= lasttrans); /* (c) transitions never decrease */
		lasttrans = C[n].trans
	:: else -> skip
	fi
#endif
}

/* a possibly lagging read of the ref */
inline READ(x) {
	if
	:: x = tip
	:: v1 -> x = prev1
	:: v2 -> x = prev2
	fi
}

active proctype clock() {
end_clk:
	do
	:: now < MAXT ->
		atomic {
			now++;
			printf("MSC: --- t=%d ---\n", now);
#ifdef PROP_A
			acted = 0;
#endif
			if
			:: v1 && until1 + LAG < now -> v1 = 0; prev1 = 0; until1 = 0
			:: else -> skip
			fi;
			if
			:: v2 && until2 + LAG < now -> v2 = 0; prev2 = 0; until2 = 0
			:: else -> skip
			fi
		}
	od
}


/* --------------------------------------------------------------- client */

/* read, then decide from the section 5 table; dec = D_NONE answers without a write */
inline RDW() {
	attempt++;
	READ(r);
	printf("MSC: c%d %e: reads commit %d (tip %d)\n", me, op, r, tip);
	dec = D_NONE;
	if
	:: op == ACQUIRE ->
		if
		:: r == 0 || C[r].phase == REL -> dec = D_MINT /* fresh */
		:: else ->
			if
			:: now > C[r].exp + SKEW -> dec = D_ROTATE /* takeover of an expired lease */
			:: else ->
#ifdef BROKEN_SAMEID
				if
				:: C[r].owner == id -> dec = D_PRESERVE /* BROKEN: admitted by identity */
				:: else -> skip /* held */
				fi
#else
				skip /* held (already_held when `same`): no write */
#endif
			fi
		fi
	:: op == RELEASE ->
		if
		:: r == 0 || C[r].phase == REL -> skip /* already released */
		:: else ->
			if
#ifdef BROKEN_RELOWNER
			:: C[r].owner == id || C[r].tok == mytok -> dec = D_RELEASE /* BROKEN: by identity */
#else
			:: C[r].tok == mytok -> dec = D_RELEASE
#endif
			:: else -> skip /* not owner */
			fi
		fi
	:: else -> /* heartbeat, transition, reacquire presenting T = mytok */
		if
		:: r == 0 || C[r].phase == REL || C[r].tok != mytok -> held = 0 /* not holder */
		:: else ->
			if
			:: op != REACQUIRE && now > C[r].exp + SKEW -> held = 0 /* expired */
			:: else ->
				if
				:: C[r].owner != id -> dec = D_ROTATE /* live handoff */
				:: else ->
					if
					:: op == HEARTBEAT && now + CTTL(r) < C[r].exp + FLOOR && C[r].exp - now >= HALF ->
						held = 1; bexp = C[r].exp; /* not_due: success without a write (section 6) */
						REACH(REACH_NOTDUE)
					:: else -> dec = D_PRESERVE
					fi
				fi
			fi
		fi
	fi;
	printf("MSC: c%d %e: decides %e\n", me, op, dec)
}

/* the operation ends: clear the per-operation locals (keeps the state space small) */
inline RESET() {
	op = 0; dec = 0; attempt = 0; r = 0; s = 0; n = 0; k = 0; j = 0;
	tw = 0; mine0 = 0; mine1 = 0; landed = 0; res = 0
#ifdef VARTTL
	; wttl = 0
#endif
}

/* success reported with the payload of commit k */
inline SUCCESS() {
	if
	:: op == RELEASE || C[k].exp - now >= HALF ->
#ifdef PROP_D
		/* (d) a write reported as success is in the ref's history */
		j = tip; res = 0;
		do
		:: j == 0 -> break
		:: j != 0 && j == k -> res = 1; break
		:: j != 0 && j != k -> j = C[j].parent
		od;
		assert(C[k].applied && res == 1);
#endif
		printf("MSC: c%d %e: success with commit %d\n", me, op, k);
		/* the reach checks: interesting successes do happen */
		REACH(REACH_TAKEOVER && op == ACQUIRE && C[k].parent != 0 &&
		      C[C[k].parent].phase != REL && C[k].tok != C[C[k].parent].tok);
		if
		:: op != RELEASE -> held = 1; mytok = C[k].tok; bexp = C[k].exp
		:: else -> skip
		fi
	:: else ->
		printf("MSC: c%d %e: landed, too little TTL left\n", me, op);
#ifdef FIX_SHORTTTL
		/* proposed fix: a landed write that is not a success still bounds
		 * the holder's deadline: deadline = min(deadline, its expires_at) */
		if
		:: held && C[k].exp < bexp -> bexp = C[k].exp
		:: else -> skip
		fi
#else
		skip
#endif
		/* too little of the TTL left: not a success (section 5) */
	fi
}

/* build commit n for decision dec over r and remember it as this operation's */
inline BUILD() {
	n = ncommit;
	C[n].parent = r;
	C[n].hb = 0;
	if
	:: dec == D_MINT || dec == D_ROTATE ->
		C[n].owner = id; C[n].tok = tokctr + 1;
		C[n].trans = (r == 0 -> 0 : C[r].trans + 1);
		C[n].phase = (op == ACQUIRE || r == 0 -> CLAIMED : C[r].phase);
		C[n].exp = now + WTTL
	:: dec == D_PRESERVE ->
		C[n].owner = C[r].owner; C[n].tok = C[r].tok; C[n].trans = C[r].trans;
		C[n].phase = (op == TRANSITION -> 3 - C[r].phase : C[r].phase);
		C[n].exp = now + WTTL;
		C[n].hb = (op == HEARTBEAT -> 1 : 0);
#ifndef APPEND_HEARTBEATS
		/* a heartbeat over a heartbeat of the same tenure, phase and TTL
		 * replaces it: its parent is the tip's parent; the CAS below is
		 * still from r, the oid read (section 2, issue 29) */
		if
		:: op == HEARTBEAT && C[r].hb && C[r].tok == C[n].tok && C[r].phase == C[n].phase &&
		   SAMETTL(r) -> C[n].parent = C[r].parent;
		      REACH(REACH_REPLACED)
		:: else -> skip
		fi
#endif
	:: dec == D_RELEASE ->
		C[n].owner = id; C[n].tok = C[r].tok; C[n].trans = C[r].trans;
		C[n].phase = REL; C[n].exp = now
	fi;
#ifdef VARTTL
	C[n].ttl = WTTL;
#endif
	tw = now
}

/* the store applied commit n: keep its slot, remember it as this operation's */
inline APPLIED() {
	ncommit++;
	if
	:: mine0 == 0 -> mine0 = n
	:: else -> mine1 = n
	fi;
	if
	:: C[n].tok > tokctr -> tokctr = C[n].tok /* a minted token is now in use */
	:: else -> skip
	fi;
	C[n].applied = 1; settip(n);
	printf("MSC: c%d %e: store applies commit %d over %d (owner %d tok %d trans %d phase %d exp %d)\n",
	       me, op, n, C[n].parent, C[n].owner, C[n].tok, C[n].trans, C[n].phase, C[n].exp)
}

/* the CAS failed: the commit never existed; free its slot (a failed write's
 * token is never seen by anyone) */
inline DISCARD() {
	printf("MSC: c%d %e: CAS from %d fails (tip %d)\n", me, op, r, tip);
#ifdef BROKEN_SETTLEMOVED
	ncommit++ /* keep it: the broken settling may report it */
#else
	C[n].owner = 0; C[n].tok = 0; C[n].trans = 0; C[n].phase = 0; C[n].exp = 0;
	C[n].parent = 0;
#ifdef VARTTL
	C[n].ttl = 0;
#endif
	n = 0
#endif
}

proctype client(byte me) {
	byte id = (me == 2 -> 1 : 0);
	byte mytok = 0; /* last token obtained by a successful operation */
	byte bexp = 0;  /* believed expires_at of the held tenure */
	bit held = 0;   /* believes it holds the lease (until bexp) */
	byte ops = 0;
	mtype op, dec;
	byte attempt, r, s, n, k, j, tw, mine0, mine1, res;
	bit landed;
#ifdef VARTTL
	byte wttl;
#endif

end_idle:
	do
#if defined(PROP_A) || defined(PROP_E)
	/* guarded work: a client acts only while it believes it holds the lease;
	 * (a) and (e) are judged against the store's state at that instant */
	:: atomic {
		held && now <= bexp && NOT_ACTED ->
		if
		:: tip != 0 && C[tip].tok == mytok && C[tip].phase != REL && now <= C[tip].exp ->
			printf("MSC: c%d acts under token %d\n", me, mytok);
#ifdef PROP_A
			assert((acted & ~(1 << me)) == 0); /* (a) */
			acted = acted | (1 << me)
#else
			skip
#endif
		:: else ->
			printf("MSC: c%d acts under token %d, not current and unexpired (fenced)\n", me, mytok);
#ifdef PROP_E
			assert(false) /* (e) a believing holder holds the current, unexpired token */
#else
			skip
#endif
		fi
	   }
#endif
	:: atomic {
		ops < OPS ->
		ops++;
		if
		:: op = ACQUIRE
		:: mytok != 0 -> op = HEARTBEAT
		:: mytok != 0 -> op = TRANSITION
		:: mytok != 0 -> op = REACQUIRE
		:: mytok != 0 -> op = RELEASE
		fi;
#ifdef VARTTL
		if
		:: op != RELEASE -> wttl = TTL
		:: op != RELEASE && me == 0 -> wttl = TTL + 1 /* client 0 varies its TTL */
		:: op == RELEASE -> wttl = 0
		fi;
#endif
		if
		:: op == RELEASE ->
			held = 0; /* the guarded work stops before the release is sent (section 6) */
#ifdef PROP_A
			acted = acted & ~(1 << me)
#endif
		:: else -> skip
		fi;
		RDW();
		if
		:: dec == D_NONE -> RESET()
		:: else -> goto write
		fi
	   }
	od;

write:	/* the write: a CAS from the oid read (the client may stall before it) */
#ifdef BROKEN_DELCREATE
	if
	:: op == ACQUIRE && dec == D_ROTATE ->
		atomic { /* BROKEN: takeover by cas_delete(old) ... */
			if
			:: tip == r -> settip(0);
				printf("MSC: c%d %e: store deletes the ref (was commit %d)\n", me, op, r)
			:: else -> tw = now; goto settle
			fi
		};
		atomic { /* ... then, the ref absent for a while, cas_create(new) */
			BUILD();
			C[n].parent = 0;
			if
			:: tip == 0 -> APPLIED();
				if
				:: k = n; SUCCESS(); RESET(); goto end_idle
				:: skip
				fi
			:: else -> DISCARD()
			fi;
			goto settle
		}
	:: else -> skip
	fi;
#endif
	atomic {
		BUILD();
		if
		:: tip == r ->
#ifdef PROP_B
			if
			:: dec == D_RELEASE ->
				assert(C[r].tok == mytok) /* (b) release frees only the releaser's token */
			:: else -> skip
			fi;
#endif
			APPLIED();
			if
			:: k = n; SUCCESS(); RESET(); goto end_idle /* answered */
			:: printf("MSC: c%d %e: response lost\n", me, op) /* the response is lost after the store applied the write */
			fi
		:: else -> DISCARD() /* CAS failed (or a success the primitives' re-read did not confirm) */
		fi
	};

settle:	/* settling (section 5): re-read after the verify window */
	atomic {
#ifndef BROKEN_NOLAG
		(now > tw + LAG || now == MAXT) ->
		if
		:: now <= tw + LAG -> RESET(); goto end_idle /* the run ends: outcome unknown */
		:: else -> skip
		fi;
#endif
		READ(s);
		printf("MSC: c%d %e: settles: reads commit %d (tip %d)\n", me, op, s, tip);
		/* landed: the tip is, or descends from, a commit of this operation */
		k = s; landed = 0;
		do
		:: k == 0 -> break
		:: k != 0 && (k == mine0 || k == mine1) -> landed = 1; break
		:: k != 0 && k != mine0 && k != mine1 -> k = C[k].parent
		od;
#ifdef BROKEN_SETTLEMOVED
		if
		:: !landed && s != r -> landed = 1; k = n /* BROKEN: "the ref moved, so my write landed" */
		:: else -> skip
		fi;
#endif
		if
		:: landed && op == RELEASE -> SUCCESS(); RESET(); goto end_idle
		:: landed && op != RELEASE && s != 0 && C[s].tok == C[k].tok && C[s].phase != REL ->
			REACH(REACH_SETTLED && C[k].exp - now >= HALF);
			SUCCESS(); RESET(); goto end_idle
		:: landed && op != RELEASE && !(s != 0 && C[s].tok == C[k].tok && C[s].phase != REL) ->
			REACH(REACH_LOSTSINCE);
			held = 0; RESET(); goto end_idle /* landed, lease lost since: held / not holder */
		:: !landed && s == r ->
#ifdef BROKEN_NOLAG
			/* BROKEN: "ref equals old => not applied", a known failure */
#ifdef PROP_D
			assert(!C[mine0].applied && !C[mine1].applied); /* (d) a known failure is truthful */
#endif
			RESET(); goto end_idle
#else
			skip /* tip still old after the window: unknown; retry the whole operation */
#endif
		:: !landed && s != r ->
			/* someone else acted: this operation's writes did not land; decide again */
#ifdef PROP_D
			assert(!C[mine0].applied && !C[mine1].applied) /* (d) a known failure is truthful */
#else
			skip
#endif
		fi;
		if
		:: attempt < TRIES ->
			RDW();
			if
			:: dec == D_NONE -> RESET(); goto end_idle
			:: else -> goto write
			fi
		:: else -> RESET(); goto end_idle
		fi
	}
}

init {
	atomic {
		run client(0);
		run client(1);
		run client(2)
	}
}
