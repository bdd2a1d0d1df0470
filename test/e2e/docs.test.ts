/**
 * Every curl example in README.md and docs/*.md, executed: each page gets fresh storage (an account of
 * its own in the run's Azurite) and a host of its own (so a page's examples see exactly what a reader
 * following that page on a fresh `npm start` sees), its blocks run in page order with `bash` and the real `curl`, the documented base URL
 * replaced by the host's, and each command's status and body are checked against the comment under
 * it (see test/support/docExamples.ts and docs/local-development.md for the conventions). Blocks
 * marked `<!-- example: azure-only -->` are skipped by name.
 *
 * curl, not a re-implementation: the point is that a reader can paste the command. curl is part of
 * every Debian and macOS install; where it is missing the file is skipped and says so (required in CI).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { documentationPages, documentedBaseUrl, type ExampleStep, readExamplePage, shapeMismatches } from '../support/docExamples';
import { describeWithTool, onPath } from '../support/optionalTool';
import { type FreshStorage, freshStorage } from '../support/storageAccounts';
import { describeOwnHost, type E2eHost, repoRoot, startE2eHost } from './support/harness';

const curlTool = {
  name: 'curl',
  neededBy: 'the documentation examples',
  enable: 'apt-get install curl (.ci/run does)',
  locate: () => onPath('curl'),
};

/**
 * `curl` as the examples call it, plus: the answer's status, headers and body kept in files for the
 * check, the body still printed (a pipe in an example keeps working), a key when the host wants one,
 * and a time limit a documented `--max-time` overrides (it comes later on the command line).
 */
const prelude = `
curl() {
  local key=()
  if [ -n "\${EXAMPLE_KEY:-}" ]; then key=(-H "x-functions-key: \${EXAMPLE_KEY}"); fi
  command curl --silent --show-error --max-time 55 -D "$EXAMPLE_DIR/headers" -o "$EXAMPLE_DIR/body" \\
    -w '%{http_code}' "\${key[@]}" "$@" > "$EXAMPLE_DIR/status"
  local rc=$?
  cat "$EXAMPLE_DIR/body"
  return $rc
}
# Upper-case shell variables an example sets (JOB=$(curl …)) carry over to the page's later examples,
# as they would in the reader's terminal; the environment's own are left out.
example_inherited=" $(compgen -v | grep -E '^[A-Z][A-Z0-9_]*$' | tr '\n' ' ') "
if [ -f "$EXAMPLE_DIR/vars" ]; then . "$EXAMPLE_DIR/vars"; fi
example_keep() {
  local v
  for v in $(compgen -v | grep -E '^[A-Z][A-Z0-9_]*$'); do
    case "$example_inherited" in *" $v "*) ;; *) declare -p "$v" ;; esac
  done > "$EXAMPLE_DIR/vars.next" && mv "$EXAMPLE_DIR/vars.next" "$EXAMPLE_DIR/vars"
}
trap example_keep EXIT
`;

interface Outcome {
  readonly exit: number | null;
  readonly status: number;
  readonly body: string;
  readonly stderr: string;
}

function run(step: ExampleStep, host: E2eHost, dir: string): Outcome {
  rmSync(join(dir, 'status'), { force: true });
  const command = step.command.split(documentedBaseUrl).join(host.baseUrl.replace(/\/$/, ''));
  const result = spawnSync('bash', ['-c', `${prelude}\n${command}`], {
    cwd: dir,
    encoding: 'utf8',
    timeout: 90_000,
    env: { ...process.env, EXAMPLE_DIR: dir, EXAMPLE_KEY: host.keys.admin ?? '' },
  });
  const read = (name: string): string => {
    try {
      return readFileSync(join(dir, name), 'utf8');
    } catch {
      return '';
    }
  };
  // With `curl -i` the headers go into the body file too.
  const body = read('body').replace(/^HTTP\/[\s\S]*?\r?\n\r?\n/, '');
  return { exit: result.status, status: Number(read('status') || '0'), body, stderr: result.stderr };
}

function checkStep(step: ExampleStep, outcome: Outcome): void {
  const where = `${step.page}:${step.line}\n${step.command}\n→ ${outcome.status} ${outcome.body.slice(0, 2000)}\n${outcome.stderr}`;
  // curl's 28 is "timed out": what a documented --max-time on a stream ends with.
  const timedOutOnPurpose = outcome.exit === 28 && /--max-time|\s-m\s/.test(step.command);
  if (outcome.exit !== 0 && !timedOutOnPurpose) throw new Error(`exit ${outcome.exit} at ${where}`);
  const status = step.expect.status;
  if (status === undefined ? outcome.status < 200 || outcome.status > 299 : outcome.status !== status) {
    throw new Error(`expected ${status ?? '2xx'} at ${where}`);
  }
  if (step.expect.body === undefined) return;
  let parsed: unknown;
  try {
    parsed = JSON.parse(outcome.body);
  } catch {
    throw new Error(`the body is not JSON at ${where}`);
  }
  const problems = shapeMismatches(step.expect.body, parsed);
  if (problems.length > 0)
    throw new Error(`the body differs from the documented ${step.expect.text ?? ''}:\n  ${problems.join('\n  ')}\nat ${where}`);
}

const pages = documentationPages(repoRoot)
  .map((page) => readExamplePage(repoRoot, page))
  .filter((page) => page.steps.length > 0);

describeWithTool(curlTool, 'documentation examples', () => {
  test('there are examples to run on the front page and on every capability page', () => {
    const withExamples = new Set(pages.map((p) => p.page));
    for (const page of [
      'README.md',
      'docs/sequences.md',
      'docs/counters.md',
      'docs/gates.md',
      'docs/schedules.md',
      'docs/jobs.md',
      'docs/streams.md',
    ]) {
      expect(withExamples).toContain(page);
    }
  });

  for (const [index, page] of pages.entries()) {
    const runnable = page.steps.filter((s) => s.skip === undefined);
    // A page's examples expect what a reader's first `npm start` has: a fresh app of their own.
    describeOwnHost(`${page.page} (${runnable.length} examples)`, () => {
      let storage: FreshStorage | undefined;
      let host: E2eHost;
      let dir: string;

      beforeAll(async () => {
        dir = mkdtempSync(join(tmpdir(), 'tallyho-docs-'));
        if (runnable.length === 0) return;
        storage = await freshStorage(`docs${index}`);
        host = await startE2eHost({ env: { ...page.settings, AzureWebJobsStorage: storage.connectionString } });
      });

      afterAll(async () => {
        await host?.stop();
        await storage?.stop();
        rmSync(dir, { recursive: true, force: true });
      });

      for (const step of page.steps) {
        const name = `${step.page}:${step.line} ${step.command.split('\n')[0] ?? ''}`;
        if (step.skip !== undefined) {
          test.skip(`${name} [${step.skip}]`, () => undefined);
          continue;
        }
        test(name, () => checkStep(step, run(step, host, dir)));
      }
    });
  }
});
