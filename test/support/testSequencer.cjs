/**
 * Jest's order, with the files that use a built artifact (test/support/artifacts.cjs: the .NET
 * solution, the packed clients, the deployment zip) moved to the end: `npm test` builds the
 * artifacts beside jest rather than before it (scripts/test-artifacts.mjs), so by the time these files
 * start their artifacts are built, and until then every worker runs files that need none; and the
 * scale-out run goes first (below). Otherwise jest's own order: failed files first, then the slowest
 * (or, on a fresh clone, the largest).
 * CommonJS, as jest loads its sequencer without a transform.
 */
const { readFileSync } = require('node:fs');

const Sequencer = require('@jest/test-sequencer').default;

/** Whether the file asks for an artifact (directly, or through the .NET build helper). */
const usesArtifact = (path) => /support\/(artifacts\.cjs|dotnetBuild)'/.test(readFileSync(path, 'utf8'));

/**
 * The scale-out runs first: its file is small (3 KB, 182nd of 236 by size, so on a fresh clone jest
 * started it late) and it runs for minutes (three real hosts, a kill and a restart), so starting it
 * late made it the run's tail. Longest first is the usual rule for a shortest overall time.
 */
const runsForMinutes = (path) => /\/test\/scaleout\/scaleout\.test\.ts$/.test(path);

class ArtifactsLastSequencer extends Sequencer {
  sort(tests) {
    const sorted = super.sort(tests);
    const later = new Set(sorted.filter((test) => usesArtifact(test.path)));
    const first = new Set(sorted.filter((test) => runsForMinutes(test.path) && !later.has(test)));
    return [
      ...sorted.filter((test) => first.has(test)),
      ...sorted.filter((test) => !later.has(test) && !first.has(test)),
      ...sorted.filter((test) => later.has(test)),
    ];
  }
}

module.exports = ArtifactsLastSequencer;
