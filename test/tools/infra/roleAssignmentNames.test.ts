/**
 * Role-assignment names must be predictable (What-If) and stable: a name that changes for the same
 * scope, principal and role makes the next `azd provision` fail with RoleAssignmentExists. Each
 * name, as the Bicep CLI's snapshot computes it, is compared with the formula it must follow
 * (ARM's guid() of the scope's id, the principal's key and the role).
 *
 * Before this change every name was guid(<scope id>, <principal object id>, <role>). Developers'
 * names keep exactly that formula (their object id is a parameter). The app identity's object id
 * exists only once the identity does, which What-If cannot know, so its names now use the
 * identity's resource id: a one-time change that the upgrade notes (README.md, docs/deployment.md) tell operators about.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { sampleIds } from '../../support/infra/compile';
import { armGuid, at, type Deployment, ofType, textOf } from '../../support/infra/deployment';
import { describeInfra, repoRoot } from '../../support/infra/templates';

const guidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

interface Assignment {
  readonly id: string;
  readonly name: string;
  /** Held by the developer the scenario names (else by the app's identity). */
  readonly developer: boolean;
  /** The name it must have: guid(<scope id>, <principal key>, <role>). */
  readonly expected: string;
}

function assignments(deployment: Deployment): Assignment[] {
  const identity = ofType(deployment, 'Microsoft.ManagedIdentity/userAssignedIdentities')[0]?.id ?? '(no identity)';
  return ofType(deployment, 'Microsoft.Authorization/roleAssignments').map((assignment) => {
    const developer = at(assignment.body, 'properties.principalId') === sampleIds.developer;
    const role = textOf(at(assignment.body, 'properties.roleDefinitionId')).split('/').pop() ?? '';
    // The developer by their object id (a parameter); the app identity by its resource id, known before it exists.
    const expected = armGuid(assignment.scope ?? '(no scope)', developer ? sampleIds.developer : identity, role);
    return { id: assignment.id, name: assignment.name, developer, expected };
  });
}

describeInfra('role-assignment names', (templates) => {
  let deployments: Record<string, Deployment>;

  beforeAll(() => {
    deployments = templates().deployments;
  });

  it('are known before the deployment runs: literal GUIDs in the snapshot, never a deploy-time expression', () => {
    for (const deployment of Object.values(deployments)) {
      for (const assignment of ofType(deployment, 'Microsoft.Authorization/roleAssignments')) {
        expect({ id: assignment.id, literal: guidPattern.test(assignment.name) }).toEqual({ id: assignment.id, literal: true });
      }
    }
    expect(ofType(deployments.defaults!, 'Microsoft.Authorization/roleAssignments')).toHaveLength(5);
    expect(ofType(deployments.everything!, 'Microsoft.Authorization/roleAssignments')).toHaveLength(9);
  });

  it("keep the developer's names as before: guid(<account or namespace id>, developerPrincipalId, role)", () => {
    const theirs = assignments(deployments.everything!).filter((a) => a.developer);
    expect(theirs).toHaveLength(4);
    for (const { id, name, expected } of theirs) {
      expect(id).toMatch(
        /\/providers\/Microsoft\.(Storage\/storageAccounts|ServiceBus\/namespaces)\/[^/]+\/providers\/Microsoft\.Authorization\//,
      );
      expect({ id, name }).toEqual({ id, name: expected });
    }
  });

  it("name the app identity's assignments by its resource id, and the change is in the upgrade notes", () => {
    for (const deployment of Object.values(deployments)) {
      const app = assignments(deployment).filter((a) => !a.developer);
      expect(app).toHaveLength(5);
      expect(app.map(({ id, name }) => ({ id, name }))).toEqual(app.map(({ id, expected }) => ({ id, name: expected })));
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

  it('the name check bites: another principal key or scope gives another name', () => {
    const [first] = assignments(deployments.defaults!);
    expect(first?.name).toBe(first?.expected);
    expect(first!.name).not.toBe(armGuid(`${first!.id}/elsewhere`, 'principal', 'role'));
    expect(armGuid('/subscriptions/x', 'principal', 'role')).not.toBe(armGuid('/subscriptions/x', 'other', 'role'));
  });
});
