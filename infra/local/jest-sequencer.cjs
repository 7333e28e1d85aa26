// The order jest's workers take the suites in: the longest first, so that the run does not end waiting on
// one long suite that started last. jest knows each suite's duration from its cache once it has run them
// all here; without that (a fresh clone, as in CI, or a new suite) the kinds known to be long come first —
// the container suites, the fault suites, the browser suites, the multi-service suites, then the rest — each
// kind in jest's own order (by duration where known, else by file size). docs/testing.md has the figures.
"use strict";
const Sequencer = require("@jest/test-sequencer").default;

const kinds = ["/test/containers/", "/test/faults/", "/test/browser/", "/test/e2e/"];

function rank(path) {
  const i = kinds.findIndex((kind) => path.includes(kind));
  return i === -1 ? kinds.length : i;
}

class LongestFirst extends Sequencer {
  sort(tests) {
    const ordered = super.sort(tests);
    if (ordered.every((test) => this.time(test) !== undefined)) return ordered;
    const position = new Map(ordered.map((test, i) => [test, i]));
    return [...ordered].sort((a, b) => rank(a.path) - rank(b.path) || position.get(a) - position.get(b));
  }
}

module.exports = LongestFirst;
