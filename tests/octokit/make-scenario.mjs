// Build the "reflease-git-refs" scenario for @octokit/fixtures-server from
// GitHub's real recorded responses in @octokit/fixtures (git-refs, errors):
// response statuses, headers and bodies are kept as recorded; only what the
// request must look like is adapted to reflease's client (its Accept and
// Bearer headers, and the REST paths it uses). Prints the JSON on stdout.
import { readFileSync } from "node:fs";

const root = new URL("./node_modules/@octokit/fixtures/scenarios/api.github.com/", import.meta.url);
const load = (name) => JSON.parse(readFileSync(new URL(`${name}/normalized-fixture.json`, root)));
const gitRefs = load("git-refs");
const errors = load("errors");

const TOKEN = "0000000000000000000000000000000000000001";
const REPO = "/repos/octokit-fixture-org/git-refs";

function forReflease(fixture, { method, path, body } = {}) {
  const f = structuredClone(fixture);
  f.scope = gitRefs[0].scope;
  if (method) f.method = method;
  if (path) f.path = path;
  if (body !== undefined) f.body = body;
  f.reqheaders = {
    accept: "application/vnd.github+json",
    authorization: `Bearer ${TOKEN}`,
    "x-github-api-version": "2022-11-28",
    host: fixture.reqheaders.host,
  };
  return f;
}

const find = (method, path) => gitRefs.filter((f) => f.method === method && f.path === path);
const create = find("post", `${REPO}/git/refs`)[0];
const lists = find("get", `${REPO}/git/refs/`);
const patch = find("patch", `${REPO}/git/refs/heads/test`)[0];
if (!create || lists.length < 2 || !patch || !errors.length) {
  throw new Error("@octokit/fixtures no longer has the recorded git-refs requests this scenario uses");
}

const scenario = [
  // 1. create refs/heads/test: the recorded request body, the recorded 201
  forReflease(create),
  // 2. list the namespace: the recorded listing of main + test, served where
  //    reflease asks for it (matching-refs, a prefix match)
  forReflease(lists[1], { path: `${REPO}/git/matching-refs/heads/` }),
  // 3. create again, answered by GitHub's recorded 422 "Validation Failed"
  forReflease(errors[0], { method: "post", path: `${REPO}/git/refs`, body: create.body }),
  // 4. the re-read that classifies that 422: a recorded ref object (PATCH's answer)
  forReflease(patch, { method: "get", path: `${REPO}/git/ref/heads/test`, body: "" }),
];
process.stdout.write(JSON.stringify(scenario, null, 2) + "\n");
