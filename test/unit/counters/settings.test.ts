import { counterSettings, loadConfig, settingNames } from '../../../shared/config';
import { resolveDefinition, structuralDifferences } from '../../../shared/counters/definition';
import { isAppError } from '../../../shared/errors';

describe('counter settings', () => {
  it('has defaults for every setting', () => {
    expect(counterSettings({})).toEqual({
      rollupSchedule: '*/30 * * * * *',
      defaultSafetyWindowSeconds: 60,
      defaultPartitions: 4,
      maxIncrement: 1_000_000,
      autoCreate: false,
      maxAutoCreated: 1000,
      settingsCacheSeconds: 30,
      rollupMaxHits: 100_000,
    });
    expect(loadConfig({ AzureWebJobsStorage: 'UseDevelopmentStorage=true' }).counters).toEqual(counterSettings({}));
  });

  it('names every bad setting at once, five-field and malformed schedules included', () => {
    for (const schedule of ['*/5 * * * *', '61 * * * * *']) {
      try {
        counterSettings({ [settingNames.countersRollupSchedule]: schedule, [settingNames.countersDefaultPartitions]: '101' });
        throw new Error('expected ConfigurationInvalid');
      } catch (err) {
        expect(isAppError(err) && err.code).toBe('ConfigurationInvalid');
        expect(isAppError(err) && err.extra.settings).toEqual([
          settingNames.countersRollupSchedule,
          settingNames.countersDefaultPartitions,
        ]);
      }
    }
    expect(counterSettings({ [settingNames.countersRollupSchedule]: '*/2 * * * * *' }).rollupSchedule).toBe('*/2 * * * * *');
  });

  it('fills omitted counter settings from the defaults and names structural changes', () => {
    const defaults = counterSettings({ [settingNames.countersDefaultPartitions]: '8' });
    const hits = resolveDefinition({}, defaults);
    expect(hits).toEqual({ mode: 'hits', partitions: 8, safetyWindowSeconds: 60 });
    expect(structuralDifferences(hits, { ...hits, safetyWindowSeconds: 5 })).toEqual([]);
    expect(structuralDifferences(hits, { mode: 'sharded', partitions: 2, safetyWindowSeconds: 60 })).toEqual(['mode', 'partitions']);
  });
});
