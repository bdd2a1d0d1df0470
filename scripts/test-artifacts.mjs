// Builds what the tests use but do not test the making of — the .NET solution, the packed clients
// with their scratch apps, the deployment zip — once, before jest runs (`npm test` runs this after
// the build). Each is rebuilt only when a content hash of its inputs changed (test/support/artifacts.cjs);
// an artifact whose tool is missing is left out, as its tests are (required under CI=true).
//
//   node scripts/test-artifacts.mjs            every artifact
//   node scripts/test-artifacts.mjs dotnet     only these
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { artifactNames, ensureArtifact, missingTool } = require('../test/support/artifacts.cjs');
const { inCi } = require('../test/support/optionalTool.cjs');

const wanted = process.argv.slice(2);
const unknown = wanted.filter((name) => !artifactNames.includes(name));
if (unknown.length > 0) {
  console.error(`test-artifacts: no artifact named ${unknown.join(', ')} (there are: ${artifactNames.join(', ')})`);
  process.exit(2);
}
for (const name of wanted.length > 0 ? wanted : artifactNames) {
  const missing = missingTool(name);
  if (missing !== undefined) {
    if (inCi()) {
      console.error(`test-artifacts: ${name} needs ${missing}, which CI requires`);
      process.exit(1);
    }
    console.log(`[artifacts] ${name}: left out (${missing} is not on PATH; its tests say so)`);
    continue;
  }
  await ensureArtifact(name, (line) => console.log(`[artifacts] ${line}`));
}
