/**
 * Every Service Bus topic drops duplicates: gate and job events are published with deterministic
 * message ids, and a republish after a crash must not reach subscribers twice. Checked on the model
 * of the Bicep sources (and the compiled ARM JSON when a Bicep CLI is available), and against a copy
 * of infra/ with the setting turned off, so the check is known to bite.
 */
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { resourceManifest } from '../../../shared/resourceManifest';
import { bicepModel } from '../../support/infra/bicepModel';
import { at, leafName, ofType, type TemplateModel, textOf } from '../../support/infra/templateModel';
import { infraDir, loadTemplates, repoRoot, type Templates } from '../../support/infra/templates';

const topicType = 'Microsoft.ServiceBus/namespaces/topics';

let templates: Templates;

beforeAll(async () => {
  templates = await loadTemplates();
  // The run's first compile (four Bicep CLI runs) took 80 s on a busy 2-core machine; later files reuse it.
}, 600_000);

/** Topics without duplicate detection (or without a history window), as `path:name`. */
function topicsWithoutDuplicateDetection(model: TemplateModel): string[] {
  return ofType(model, topicType, { existing: false })
    .filter((topic) => {
      const window = at(topic.body, 'properties.duplicateDetectionHistoryTimeWindow');
      return at(topic.body, 'properties.requiresDuplicateDetection') !== true || typeof window !== 'string' || !/^P/.test(window);
    })
    .map((topic) => `${topic.path}:${textOf(leafName(topic))}`);
}

describe('Service Bus topics', () => {
  it('every topic the app uses is provisioned with duplicate detection and a history window', () => {
    const expected = resourceManifest().serviceBus.topics.map((t) => t.name);
    expect(expected).toEqual(expect.arrayContaining(['gate-events', 'job-events']));
    for (const model of templates.models) {
      const topics = ofType(model, topicType, { existing: false });
      // The compiled template declares the topics once, in a loop over the list main.bicep passes.
      const count = topics.some((t) => t.loop) ? 'one per listed topic (a loop)' : topics.length;
      const wanted = model.source === 'arm' ? 'one per listed topic (a loop)' : expected.length;
      expect({ source: model.source, topics: count }).toEqual({ source: model.source, topics: wanted });
      expect({ source: model.source, missing: topicsWithoutDuplicateDetection(model) }).toEqual({ source: model.source, missing: [] });
    }
  });

  it('the check bites: a copy of infra/ with duplicate detection off fails it', async () => {
    const copy = join(repoRoot, 'test-artifacts', 'infra-no-dedup');
    rmSync(copy, { recursive: true, force: true });
    mkdirSync(copy, { recursive: true });
    cpSync(infraDir, copy, { recursive: true, filter: (source) => !source.startsWith(join(infraDir, 'tools')) });
    const module = join(copy, 'modules', 'servicebus-topic.bicep');
    const text = readFileSync(module, 'utf8');
    expect(text).toMatch(/requiresDuplicateDetection: true/);
    writeFileSync(module, text.replace('requiresDuplicateDetection: true', 'requiresDuplicateDetection: false'));
    const broken = await bicepModel(join(copy, 'main.bicep'));
    expect(topicsWithoutDuplicateDetection(broken).length).toBe(resourceManifest().serviceBus.topics.length);
    rmSync(copy, { recursive: true, force: true });
  });
});
