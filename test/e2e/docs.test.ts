/**
 * Every curl example in README.md and docs/*.md, executed on fresh apps (fresh storage: an account of
 * its own in the run's Azurite, and a host of its own): the pages that ask for the same settings
 * share one, in page order, as a reader who follows page after page on one `npm start` does; each
 * page's blocks run in page order with `bash` and the real `curl`, the documented base URL
 * replaced by the host's, and each command's status and body are checked against the comment under
 * it (see test/support/docExamples.ts and docs/local-development.md for the conventions). Blocks
 * marked `<!-- example: azure-only -->` are skipped by name.
 *
 * curl, not a re-implementation: the point is that a reader can paste the command. curl is part of
 * every Debian and macOS install; where it is missing the file is skipped and says so (required in CI).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import {
  documentationPages,
  documentedBaseUrl,
  type ExamplePage,
  type ExampleStep,
  readExamplePage,
  shapeMismatches,
} from '../support/docExamples';
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

/**
 * Runs one example in bash. Never synchronously: this process also reads the host's output, and a
 * host whose output pipe is not read stops when the pipe is full (its log writes block). A blocking
 * spawn waiting on an example that waits on the host (a job's completion, a flush) then waits for
 * a host that waits for it, until curl gives up: seen on the real host, whose logs are long.
 */
async function run(step: ExampleStep, host: E2eHost, dir: string): Promise<Outcome> {
  rmSync(join(dir, 'status'), { force: true });
  const command = step.command.split(documentedBaseUrl).join(host.baseUrl.replace(/\/$/, ''));
  const child = spawn('bash', ['-c', `${prelude}\n${command}`], {
    cwd: dir,
    env: { ...process.env, EXAMPLE_DIR: dir, EXAMPLE_KEY: host.keys.admin ?? '' },
    stdio: ['ignore', 'ignore', 'pipe'],
    timeout: 90_000,
  });
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (text: string) => (stderr += text));
  const exit = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve(code));
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
  return { exit, status: Number(read('status') || '0'), body, stderr };
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

  // Pages that ask for the same settings share one fresh app, in page order (README first), as a
  // reader who runs `npm start` once and then follows page after page does: each page's examples
  // must hold on an app the pages before it have used. A page with settings of its own gets an app
  // with them. Each page keeps its own shell variables (a new terminal per page).
  const groups = new Map<string, ExamplePage[]>();
  for (const page of pages) {
    const key = JSON.stringify(Object.entries(page.settings).sort(([a], [b]) => a.localeCompare(b)));
    groups.set(key, [...(groups.get(key) ?? []), page]);
  }

  for (const [index, group] of [...groups.values()].entries()) {
    const settings = group[0]?.settings ?? {};
    const runnable = group.flatMap((page) => page.steps.filter((s) => s.skip === undefined));
    describeOwnHost(`${group.map((p) => p.page).join(', ')} (one app, ${runnable.length} examples)`, () => {
      let storage: FreshStorage | undefined;
      let host: E2eHost;

      beforeAll(async () => {
        if (runnable.length === 0) return;
        storage = await freshStorage(`docs${index}`);
        host = await startE2eHost({ env: { ...settings, AzureWebJobsStorage: storage.connectionString } });
      });

      afterAll(async () => {
        await host?.dispose();
        await storage?.stop();
      });

      for (const page of group) {
        describe(page.page, () => {
          let dir: string;
          beforeAll(() => {
            dir = mkdtempSync(join(tmpdir(), 'tallyho-docs-'));
          });
          afterAll(() => {
            rmSync(dir, { recursive: true, force: true });
          });

          for (const step of page.steps) {
            const name = `${step.page}:${step.line} ${step.command.split('\n')[0] ?? ''}`;
            if (step.skip !== undefined) {
              test.skip(`${name} [${step.skip}]`, () => undefined);
              continue;
            }
            test(name, async () => checkStep(step, await run(step, host, dir)));
          }
        });
      }
    });
  }
});
