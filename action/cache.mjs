// The Actions cache client (@actions/cache and the Azure storage client under
// it, most of the action's JavaScript), bundled apart as dist/cache.mjs and
// imported by the set-up only where a cache service is announced
// (action/setup.mjs cachedOrBuilt): a main stage on a release or without a
// cache service does not load or parse it (docs/benchmarks.md, "GitHub Action:
// the main stage from a release"); scripts/build-dist.sh keeps it out of dist/main.mjs.
export { isFeatureAvailable, restoreCache, saveCache } from '@actions/cache';
