import { loadAppConfig } from '../../../shared/app/settings';
import { readGroup } from '../../../shared/config';
import { counterSettings } from '../../../shared/counters/settings';
import { namesOf } from '../../../shared/settings';
import { resolveDefinition, structuralDifferences } from '../../../shared/counters/definition';
import { isAppError } from '../../../shared/errors';

const names = namesOf(counterSettings);
const read = (env: Record<string, string>) => readGroup(counterSettings, env);

describe('counter settings', () => {
  it('has defaults for every setting', () => {
    expect(read({})).toEqual({
      rollupSchedule: '*/30 * * * * *',
      defaultSafetyWindowSeconds: 60,
      defaultPartitions: 4,
      maxIncrement: 1_000_000,
      autoCreate: false,
      maxAutoCreated: 1000,
      settingsCacheSeconds: 30,
      rollupMaxHits: 100_000,
    });
    expect(loadAppConfig({ AzureWebJobsStorage: 'UseDevelopmentStorage=true' }).counters).toEqual(read({}));
  });

  it('names every bad setting at once, five-field and malformed schedules included', () => {
    for (const schedule of ['*/5 * * * *', '61 * * * * *']) {
      try {
        read({ [names.rollupSchedule]: schedule, [names.defaultPartitions]: '101' });
        throw new Error('expected ConfigurationInvalid');
      } catch (err) {
        expect(isAppError(err) && err.code).toBe('ConfigurationInvalid');
        expect(isAppError(err) && err.extra.settings).toEqual([names.rollupSchedule, names.defaultPartitions]);
      }
    }
    expect(read({ [names.rollupSchedule]: '*/2 * * * * *' }).rollupSchedule).toBe('*/2 * * * * *');
  });

  it('fills omitted counter settings from the defaults and names structural changes', () => {
    const defaults = read({ [names.defaultPartitions]: '8' });
    const hits = resolveDefinition({}, defaults);
    expect(hits).toEqual({ mode: 'hits', partitions: 8, safetyWindowSeconds: 60 });
    expect(structuralDifferences(hits, { ...hits, safetyWindowSeconds: 5 })).toEqual([]);
    expect(structuralDifferences(hits, { mode: 'sharded', partitions: 2, safetyWindowSeconds: 60 })).toEqual(['mode', 'partitions']);
  });
});
