/**
 * Microsoft Entra ID as an option of infra/ (issue #36): `authMode` keys (the default) sets up nothing;
 * entra and keys+entra turn on App Service authentication (authsettingsV2) and give the app the same
 * issuer and audiences the platform checks (TALLYHO_ENTRA_*, read by shared/identity), so a token one
 * accepts the other accepts too. Neither mode lets the platform refuse a request without a token:
 * function keys (keys+entra), Tallyho credentials and the anonymous routes (entra) must still reach
 * the host and the app, which decide (docs/security.md, "Modes"; the host refuses a bearer token as
 * a key, and the platform's "require authentication" would refuse every keyed caller). The app's
 * issuer is `<TALLYHO_ENTRA_AUTHORITY>/<tenant>/v2.0` (shared/identity/entra.ts, entraIssuer).
 * Checked on the Bicep CLI's snapshot of each scenario (compile.ts).
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { declaredSettings } from '../../../docgen/settingsDoc';
import { findBicep } from '../../support/infra/bicepCli';
import { sampleIds, type ScenarioName, scenarios, snapshot } from '../../support/infra/compile';
import { at, type Deployment, isPlainObject, type JsonObject, ofType, type Resource, textOf } from '../../support/infra/deployment';
import { describeInfra, infraDir, repoRoot } from '../../support/infra/templates';

/** The app settings the entra modes add (shared/identity/settings.ts declares and parses them). */
const modeSettings = ['TALLYHO_AUTH_MODE', 'TALLYHO_ENTRA_TENANT_ID', 'TALLYHO_ENTRA_AUDIENCES', 'TALLYHO_ENTRA_AUTHORITY'];

/** The scheme and host of the cloud's login endpoint (`https://login.microsoftonline.com/` in the public cloud). */
const authority = "join(take(split(environment().authentication.loginEndpoint, '/'), 3), '/')";

const entraModes: readonly { readonly scenario: ScenarioName; readonly mode: string; readonly tenant: string }[] = [
  { scenario: 'everything', mode: 'keys+entra', tenant: sampleIds.tenant },
  { scenario: 'entra', mode: 'entra', tenant: sampleIds.entraTenant },
];

function authSettingsOf(deployment: Deployment): Resource[] {
  return ofType(deployment, 'Microsoft.Web/sites/config').filter((c) => c.name.endsWith('/authsettingsV2'));
}

function appSettingsOf(deployment: Deployment): JsonObject {
  const config = ofType(deployment, 'Microsoft.Web/sites/config').find((c) => c.name.endsWith('/appsettings'));
  const properties = at(config?.body, 'properties');
  if (!isPlainObject(properties)) throw new Error(`${deployment.scenario}: no app settings`);
  return properties;
}

describeInfra('App Service authentication (Microsoft Entra ID)', (templates) => {
  it('keys mode, the default, sets up none: no authsettingsV2 and no TALLYHO_AUTH_MODE or TALLYHO_ENTRA_* setting', () => {
    expect(templates().arm.parameters?.authMode?.defaultValue).toBe('keys');
    for (const name of ['defaults', 'bare'] as const) {
      const deployment = templates().deployments[name];
      expect({ name, auth: authSettingsOf(deployment) }).toEqual({ name, auth: [] });
      expect({ name, settings: Object.keys(appSettingsOf(deployment)).filter((key) => /^TALLYHO_(AUTH|ENTRA)_/.test(key)) }).toEqual({
        name,
        settings: [],
      });
    }
  });

  it.each(entraModes)(
    '$mode: the platform and the app check the same issuer and audiences, and the app knows its mode',
    ({ scenario, mode, tenant }) => {
      const deployment = templates().deployments[scenario];
      const [auth, ...more] = authSettingsOf(deployment);
      expect(more).toEqual([]);
      const site = ofType(deployment, 'Microsoft.Web/sites')[0]!;
      expect(auth?.id).toBe(`${site.id}/config/authsettingsV2`);
      const settings = appSettingsOf(deployment);
      const audiences = [sampleIds.entraClientId, `api://${sampleIds.entraClientId}`];
      expect(settings).toEqual(
        expect.objectContaining({
          TALLYHO_AUTH_MODE: mode,
          TALLYHO_ENTRA_TENANT_ID: tenant,
          TALLYHO_ENTRA_AUDIENCES: audiences.join(','),
          // This cloud's login endpoint (https://login.microsoftonline.com in the public cloud), known at deploy time.
          TALLYHO_ENTRA_AUTHORITY: `[${authority}]`,
        }),
      );
      const aad = at(auth?.body, 'properties.identityProviders.azureActiveDirectory');
      expect(at(auth?.body, 'properties.platform.enabled')).toBe(true);
      expect(at(aad, 'enabled')).toBe(true);
      expect(at(aad, 'registration.clientId')).toBe(sampleIds.entraClientId);
      // shared/identity accepts tokens issued by `<authority>/<tenant>/v2.0` for the listed audiences.
      expect(at(aad, 'registration.openIdIssuer')).toBe(`[format('{0}/{1}/v2.0', ${authority}, '${tenant}')]`);
      expect(at(aad, 'validation.allowedAudiences')).toEqual(textOf(settings.TALLYHO_ENTRA_AUDIENCES).split(','));
      // No client secret: the platform only validates tokens (and signs browsers in with ID tokens).
      expect(at(aad, 'registration.clientSecretSettingName')).toBeUndefined();
      expect(at(auth?.body, 'properties.login.tokenStore.enabled')).toBe(false);
      expect(at(auth?.body, 'properties.httpSettings.requireHttps')).toBe(true);
    },
  );

  it.each(entraModes)(
    '$mode: requests without a token still reach the host and the app (function keys, credentials, anonymous routes)',
    ({ scenario }) => {
      const [auth] = authSettingsOf(templates().deployments[scenario]);
      expect(at(auth?.body, 'properties.globalValidation')).toEqual({
        requireAuthentication: false,
        unauthenticatedClientAction: 'AllowAnonymous',
      });
    },
  );

  it("an entra mode without the registration's client id does not deploy: the evaluation fails naming entraClientId", () => {
    const run = snapshot(findBicep()!, infraDir, join(repoRoot, 'test-artifacts', 'bicep-no-client-id'), 'noClientId', {
      env: { TALLYHO_AUTH_MODE: 'entra' },
      params: {},
    });
    expect(run.problems.join('\n')).toMatch(/entraClientId is required when authMode is entra/);
  });

  it('the settings the entra modes add are settings the app declares', () => {
    const declared = new Set(declaredSettings().map((setting) => setting.env));
    const added = Object.keys(appSettingsOf(templates().deployments.entra)).filter(
      (key) => !(key in appSettingsOf(templates().deployments.defaults)),
    );
    expect(added.sort()).toEqual([...modeSettings].sort());
    expect(added.filter((key) => !declared.has(key))).toEqual([]);
  });

  it('the scenarios cover every mode', () => {
    const modes = Object.values(scenarios).map((s) => ('TALLYHO_AUTH_MODE' in s.env ? s.env.TALLYHO_AUTH_MODE : 'keys'));
    expect(new Set(modes)).toEqual(new Set(['keys', 'entra', 'keys+entra']));
  });
});

describe('the app roles of the Entra registration (scripts/entra-app-roles.mjs)', () => {
  interface AppRole {
    readonly id: string;
    readonly value: string;
    readonly allowedMemberTypes: readonly string[];
    readonly isEnabled: boolean;
  }

  function roles(...processors: string[]): { status: number | null; roles: AppRole[]; stderr: string } {
    const run = spawnSync(process.execPath, [join(repoRoot, 'scripts', 'entra-app-roles.mjs'), ...processors], { encoding: 'utf8' });
    return { status: run.status, roles: run.status === 0 ? (JSON.parse(run.stdout) as AppRole[]) : [], stderr: run.stderr };
  }

  it('are admin, submitter, worker of every processor and worker of each processor named, for users and applications', () => {
    const { status, roles: listed } = roles('ocr', 'ocr-fast', 'ocr');
    expect(status).toBe(0);
    expect(listed.map((r) => r.value)).toEqual([
      'Tallyho.Admin',
      'Tallyho.Submitter',
      'Tallyho.Worker',
      'Tallyho.Worker.ocr',
      'Tallyho.Worker.ocr-fast',
    ]);
    for (const role of listed)
      expect(role).toEqual(expect.objectContaining({ allowedMemberTypes: ['User', 'Application'], isEnabled: true }));
    // docs/deployment.md lists the roles an operator assigns.
    const guide = readFileSync(join(repoRoot, 'docs', 'deployment.md'), 'utf8');
    for (const value of ['Tallyho.Admin', 'Tallyho.Submitter', 'Tallyho.Worker', 'Tallyho.Worker.<processor>'])
      expect(guide).toContain(`\`${value}\``);
  });

  it('give each role the same id on every run (an update keeps assigned roles), distinct from the others', () => {
    const first = roles('ocr').roles;
    const again = roles('billing', 'ocr').roles;
    const ids = new Map(again.map((r) => [r.value, r.id]));
    for (const role of first) expect({ value: role.value, id: ids.get(role.value) }).toEqual({ value: role.value, id: role.id });
    expect(new Set(again.map((r) => r.id)).size).toBe(again.length);
    for (const role of again) expect(role.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it('refuse a name that is no processor name', () => {
    const { status, stderr } = roles('ocr', 'Not Valid');
    expect(status).toBe(2);
    expect(stderr).toMatch(/not a processor name: Not Valid/);
  });
});
