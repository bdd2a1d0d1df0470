/**
 * Role-assignment names must be predictable (What-If) and stable: a name that changes for the same
 * scope, principal and role makes the next `azd provision` fail with RoleAssignmentExists. Each
 * name is read in main.bicep's terms and compared with the formula it must follow.
 *
 * Before this change every name was guid(<scope id>, <principal object id>, <role>). Developers'
 * names keep exactly that formula (their object id is a parameter). The app identity's object id
 * exists only once the identity does, which What-If cannot know, so its names now use the
 * identity's resource id: a one-time change that the upgrade notes (README.md, docs/deployment.md) tell operators about.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { bicepModel } from '../../support/infra/bicepModel';
import { at, Expr, ofType, type ResourceView, type TemplateModel, textOf } from '../../support/infra/templateModel';
import { compiledTemplates, mainBicep, repoRoot } from '../../support/infra/templates';

let models: TemplateModel[];

beforeAll(async () => {
  // The source model with the developer's id left symbolic (its default, '', would hide it).
  const source = await bicepModel(mainBicep, { developerPrincipalId: new Expr('developerPrincipalId') });
  const compiled = compiledTemplates();
  models = compiled === undefined ? [source] : [source, compiled.model];
  // The run's first compile (four Bicep CLI runs) took 80 s on a busy 2-core machine; later files reuse it.
}, 600_000);

interface NameParts {
  readonly where: string;
  /** The guid() arguments: scope id, principal key, role definition id. */
  readonly args: readonly string[];
}

/** Splits `guid(a, b, c)` into its top-level arguments. */
function guidArguments(text: string): string[] {
  const inner = /^guid\((.*)\)$/s.exec(text.trim())?.[1];
  if (inner === undefined) return [];
  const args: string[] = [];
  let depth = 0;
  let quoted = false;
  let current = '';
  for (const c of inner) {
    if (c === "'") quoted = !quoted;
    if (!quoted && (c === '(' || c === '[')) depth++;
    if (!quoted && (c === ')' || c === ']')) depth--;
    if (!quoted && depth === 0 && c === ',') {
      args.push(current.trim());
      current = '';
    } else current += c;
  }
  args.push(current.trim());
  return args;
}

function nameParts(assignment: ResourceView): NameParts {
  return { where: `${assignment.path}:${assignment.symbol}`, args: guidArguments(textOf(at(assignment.body, 'name'))) };
}

function assignments(model: TemplateModel): ResourceView[] {
  return ofType(model, 'Microsoft.Authorization/roleAssignments');
}

/** The scope and principal key (guid's first two arguments) of the developer's or the app's assignments. */
function principalKeys(model: TemplateModel, developer: boolean): { where: string; scope?: string; principal?: string }[] {
  return assignments(model)
    .filter((a) => a.conditional === developer)
    .map((a) => {
      const { where, args } = nameParts(a);
      return { where, scope: args[0], principal: args[1] };
    });
}

describe('role-assignment names', () => {
  it('are guid(scope, principal key, role) built from deploy-time-known values only', () => {
    for (const model of models) {
      const found = assignments(model);
      expect(found.length).toBe(9);
      for (const assignment of found) {
        const { where, args } = nameParts(assignment);
        expect({ source: model.source, where, args: args.length }).toEqual({ source: model.source, where, args: 3 });
        // A module output or a runtime property here is what what-if-short-circuiting rejects.
        expect({ where, runtime: /reference\(|outputs|properties\.principalId/.test(args.join()) }).toEqual({ where, runtime: false });
        expect(args[2]).toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/);
      }
    }
  });

  it("keep the developer's names as before: guid(<account or namespace id>, developerPrincipalId, role)", () => {
    for (const model of models) {
      const keys = principalKeys(model, true);
      expect(keys).toHaveLength(4);
      const principal = model.source === 'arm' ? "parameters('developerPrincipalId')" : 'developerPrincipalId';
      expect(keys).toEqual(keys.map(({ where, scope }) => ({ where, scope, principal })));
      // The scope is the account or namespace named st<token> / sb-<token>, as the module output was.
      for (const { scope } of keys)
        expect(scope).toMatch(/Microsoft\.(Storage\/storageAccounts|ServiceBus\/namespaces)|storage\.id|namespace\.id/);
    }
  });

  it("name the app identity's assignments by its resource id, and the change is in the upgrade notes", () => {
    const identityId = /^resourceId\(subscription\(\)\.subscriptionId, .*'Microsoft\.ManagedIdentity\/userAssignedIdentities'/;
    for (const model of models) {
      const keys = principalKeys(model, false);
      expect(keys).toHaveLength(5);
      expect(keys.filter(({ principal }) => !identityId.test(principal ?? ''))).toEqual([]);
    }
    // The front page names the one-time change; docs/deployment.md says what to do.
    const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
    const pointer = readme.slice(readme.indexOf('## Upgrade notes'));
    expect(readme.indexOf('## Upgrade notes')).toBeGreaterThan(0);
    expect(pointer).toMatch(/RoleAssignmentExists/);
    expect(pointer).toMatch(/docs\/deployment\.md#upgrade-notes/);
    const guide = readFileSync(join(repoRoot, 'docs', 'deployment.md'), 'utf8');
    const start = guide.indexOf('### Upgrade notes');
    expect(start).toBeGreaterThan(0);
    const notes = guide.slice(start, start + 4000);
    expect(notes).toMatch(/RoleAssignmentExists/);
    expect(notes).toMatch(/az role assignment delete/);
  });
});
