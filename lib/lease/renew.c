/* The renewal point (protocol.md §6 "Renewal point", issue 39). Pure. */
#include "lease/renew.h"

#include "lease/policy.h"
#include "reflease/heartbeat.h"

/* @p t rounded down to a whole second. */
static double whole_floor(double t)
{
	double w = (double)(int64_t)t;

	return w > t ? w - 1 : w;
}

void lease__renew_note(lease_renew_latency *l, double seconds)
{
	l->s[l->n % LEASE_RENEW_WINDOW] = seconds > 0 ? seconds : 0;
	l->n++;
}

double lease__renew_latency(const lease_renew_latency *l)
{
	unsigned i, k = l->n < LEASE_RENEW_WINDOW ? l->n : LEASE_RENEW_WINDOW;
	double m = 1.0, w;

	for (i = 0; i < k; i++)
		if (l->s[i] > m)
			m = l->s[i];
	w = whole_floor(m);
	return w < m ? w + 1 : w;
}

double lease__renew_need(int64_t ttl, double latency_s, int skew_s)
{
	double gaps = 0, b = 1;
	int i;

	for (i = 1; i < LEASE_RENEW_ATTEMPTS; i++, b *= 2)
		gaps += b;
	return lease__policy_lost_margin(ttl) + LEASE_KEEP_MARGIN + (skew_s > 0 ? skew_s : 0) +
	       gaps + LEASE_RENEW_ATTEMPTS * (latency_s > 1.0 ? latency_s : 1.0);
}

double lease__renew_lead(int64_t ttl, double latency_s, int skew_s)
{
	double need = lease__renew_need(ttl, latency_s, skew_s);
	double most = (double)(ttl - lease__policy_floor(ttl));

	return need < most ? need : most;
}

int64_t lease__renew_pace(int budgeted, int64_t ttl)
{
	return budgeted ? LEASE_RENEW_PACE_BUDGETED : lease__policy_interval(ttl, 0);
}

double lease__renew_latest(int64_t expires_at, int64_t ttl, double latency_s, int skew_s)
{
	double at = (double)expires_at - lease__renew_lead(ttl, latency_s, skew_s);
	double cap = lease__policy_lost_deadline(expires_at, ttl) - LEASE_KEEP_MARGIN;

	return whole_floor(at < cap ? at : cap);
}

double lease__renew_at(int64_t since, int64_t expires_at, int64_t ttl, int64_t pace,
                       double latency_s, int skew_s)
{
	double at = lease__renew_latest(expires_at, ttl, latency_s, skew_s);

	if (pace > 0 && (double)(since + pace) < at)
		at = (double)(since + pace);
	return at > (double)since ? at : (double)since + 1;
}

double lease__renew_window(int64_t ttl)
{
	return (double)(ttl - lease__policy_floor(ttl)) - lease__policy_lost_margin(ttl);
}
