/**
 * The az CLI deployment script, in dry-run mode: it prints every command and runs none, so the whole
 * flow (build, package, provision, publish, smoke check) is checked here without Azure or az.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

import { repoRoot } from '../../support/infra/templates';
import { onPath, optionalTool } from '../../support/optionalTool';

const script = join(repoRoot, 'scripts', 'deploy.sh');

function deploy(...args: string[]): { status: number | null; stdout: string; stderr: string; commands: string[] } {
  // A PATH without az proves the dry run needs no Azure tooling.
  const result = spawnSync('bash', [script, ...args], {
    cwd: repoRoot,
    encoding: 'utf8',
    timeout: 20_000,
    env: { PATH: '/usr/bin:/bin', HOME: '/nonexistent' },
  });
  const commands = result.stdout
    .split('\n')
    .filter((line) => line.startsWith('+ '))
    .map((line) => line.slice(2));
  return { status: result.status, stdout: result.stdout, stderr: result.stderr, commands };
}

/** A dry run of a full deployment of environment demo to westeurope, with `options`. */
function dryRun(...options: string[]): ReturnType<typeof deploy> {
  return deploy('--env', 'demo', '--location', 'westeurope', ...options, '--dry-run');
}

function indexOf(commands: readonly string[], pattern: RegExp): number {
  const at = commands.findIndex((c) => pattern.test(c));
  if (at < 0) throw new Error(`no command matches ${String(pattern)} in:\n${commands.join('\n')}`);
  return at;
}

describe('scripts/deploy.sh --dry-run', () => {
  it('builds, packages, provisions, publishes with config-zip and smoke-checks, in that order', () => {
    const { status, commands, stderr } = deploy('--env', 'demo', '--location', 'swedencentral', '--dry-run');
    expect({ status, stderr: stderr.trim() }).toEqual({ status: 0, stderr: '' });
    const order = [
      /^npm ci /,
      /^npm run typecheck$/,
      /^npm run build$/,
      /^node scripts\/infra-sync\.mjs$/,
      /^cp -R dist\/app \.deploy\/package\/dist\/$/,
      /^cp host\.json \.deploy\/package\/$/,
      /^node scripts\/package-manifest\.mjs \.deploy\/package\/package\.json$/,
      /zip -q -r \.\.\/tallyho\.zip \./,
      /^az deployment sub create --name tallyho-demo --location swedencentral --template-file infra\/main\.bicep --parameters environmentName=demo location=swedencentral nodeVersion=22 /,
      /^az deployment sub show --name tallyho-demo --query properties\.outputs/,
      /^az functionapp deployment source config-zip --resource-group .+ --name .+ --src \.deploy\/tallyho\.zip$/,
      /^az functionapp function list /,
      /^curl .*\/api\/health$/,
    ].map((pattern) => indexOf(commands, pattern));
    expect(order).toEqual([...order].sort((a, b) => a - b));
  });

  it('publishes through /api/publish with an Entra token that never appears on a command line', () => {
    const { status, stdout, commands } = deploy('--env', 'demo', '--location', 'westeurope', '--publish', 'api', '--dry-run');
    expect(status).toBe(0);
    expect(commands.some((c) => c.startsWith('az functionapp deployment source config-zip'))).toBe(false);
    indexOf(commands, /^az account get-access-token /);
    const post = commands[indexOf(commands, /\/api\/publish/)]!;
    expect(post).toMatch(/^curl .*-X POST -H @.* --data-binary @\.deploy\/tallyho\.zip https:\/\/.*\/api\/publish\\\?RemoteBuild=false/);
    expect(stdout).not.toMatch(/Bearer/);
  });

  it('grants no developer roles with --developer-principal none, and skips provisioning when asked', () => {
    const none = deploy('--env', 'demo', '--location', 'westeurope', '--developer-principal', 'none', '--dry-run');
    expect(none.commands[indexOf(none.commands, /^az deployment sub create/)]).toMatch(/developerPrincipalId= /);
    expect(none.commands.some((c) => c.startsWith('az ad signed-in-user'))).toBe(false);
    const skipped = deploy('--env', 'demo', '--skip-provision', '--node-version', '20', '--dry-run');
    expect(skipped.status).toBe(0);
    expect(skipped.commands.some((c) => c.startsWith('az deployment sub create'))).toBe(false);
    indexOf(skipped.commands, /^az deployment sub show --name tallyho-demo/);
  });

  it('keys mode (the default) touches no Entra app registration and provisions authMode=keys', () => {
    const { status, commands } = dryRun();
    expect(status).toBe(0);
    expect(commands.filter((c) => /^az (ad app|ad sp|rest)/.test(c))).toEqual([]);
    expect(commands[indexOf(commands, /^az deployment sub create/)]).toMatch(/ authMode=keys entraClientId= /);
  });

  it('an entra mode finds or creates the app registration (roles, v2 tokens, service principal) before provisioning with its client id, then sets the sign-in redirect', () => {
    const { status, commands } = dryRun('--auth', 'entra', '--worker-role', 'ocr');
    expect(status).toBe(0);
    const order = [
      /^node scripts\/entra-app-roles\.mjs ocr > \.deploy\/app-roles\.json$/,
      /^az ad app list --display-name tallyho-demo /,
      /^az ad app create --display-name tallyho-demo --sign-in-audience AzureADMyOrg .*--app-roles @\.deploy\/app-roles\.json /,
      /^az ad app update --id \\<entra-client-id\\> --identifier-uris api:\/\/\\<entra-client-id\\>$/,
      /^az rest --method PATCH .*graph\.microsoft\.com\/v1\.0\/applications.*requestedAccessTokenVersion.*2/,
      /^az ad sp create --id \\<entra-client-id\\>/,
      /^az deployment sub create .* authMode=entra entraClientId=\\<entra-client-id\\> /,
      /^az deployment sub show /,
      /^az ad app update --id \\<entra-client-id\\> --web-redirect-uris https:\/\/.*\/\.auth\/login\/aad\/callback$/,
      /^az functionapp deployment source config-zip /,
    ].map((pattern) => indexOf(commands, pattern));
    expect(order).toEqual([...order].sort((a, b) => a - b));
  });

  it('an entra mode with a given client id updates that registration instead of creating one', () => {
    const id = '11111111-2222-4333-8444-555555555555';
    const { status, commands } = dryRun('--auth', 'keys+entra', '--entra-client-id', id);
    expect(status).toBe(0);
    expect(commands.some((c) => /^az ad app (list|create)/.test(c))).toBe(false);
    indexOf(commands, new RegExp(`^az ad app update --id ${id} --app-roles @\\.deploy/app-roles\\.json$`));
    expect(commands[indexOf(commands, /^az deployment sub create/)]).toContain(` authMode=keys+entra entraClientId=${id} `);
  });

  it('package-only builds the zip and touches nothing in Azure (the azd prepackage hook)', () => {
    const { status, commands } = deploy('--package-only', '--dry-run');
    expect(status).toBe(0);
    indexOf(commands, /zip -q -r/);
    expect(commands.filter((c) => c.startsWith('az '))).toEqual([]);
  });

  it("leaves the bundle's code cache out of a package for a Node major other than the build's, and makes it for Azure's path otherwise", () => {
    const builder = process.versions.node.split('.')[0];
    for (const version of ['20', '22']) {
      const { status, commands } = deploy('--package-only', '--node-version', version, '--dry-run');
      expect(status).toBe(0);
      const removed = commands.some((c) => c === 'rm -f .deploy/package/dist/app/tallyho.js.cache');
      // A cache serves the path it was made for (scripts/app-entry.cjs): Linux apps run at /home/site/wwwroot.
      const remade = commands.some(
        (c) => c === 'node scripts/build-app.mjs code-cache .deploy/package/dist/app /home/site/wwwroot/dist/app',
      );
      expect({ version, removed, remade }).toEqual({ version, removed: version !== builder, remade: version === builder });
    }
  });

  it('refuses to run without an environment name or with an unknown option', () => {
    const missing = deploy('--location', 'westeurope', '--dry-run');
    expect(missing.status).toBe(1);
    expect(missing.stderr).toMatch(/--env \(or AZURE_ENV_NAME\) is required/);
    const mode = deploy('--env', 'demo', '--auth', 'oauth', '--dry-run');
    expect(mode.status).toBe(1);
    expect(mode.stderr).toMatch(/--auth must be keys, entra or keys\+entra/);
    const unknown = deploy('--bogus');
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toMatch(/unknown option --bogus/);
  });

  const shellcheck = optionalTool({
    name: 'shellcheck',
    neededBy: 'the deploy script lint',
    enable: 'apt-get install shellcheck (.ci/run does)',
    locate: () => onPath('shellcheck'),
  });
  (shellcheck === undefined ? it.skip : it)('is shellcheck-clean', () => {
    const check = spawnSync(shellcheck ?? 'shellcheck', ['--severity=style', script], { encoding: 'utf8' });
    expect(check.stdout + check.stderr).toBe('');
    expect(check.status).toBe(0);
  });
});
