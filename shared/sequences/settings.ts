/** The sequences capability's settings (shared/settings.ts explains the declarations). */
import { bool, group, int, type SettingsOf } from '../settings';

export const sequenceSettings = group({
  autoCreate: bool('TALLYHO_SEQUENCES_AUTO_CREATE', false, 'create an unknown sequence with defaults on its first `next` (else 404)'),
  maxAutoCreated: int(
    'TALLYHO_SEQUENCES_MAX_AUTO_CREATED',
    1000,
    1,
    1_000_000,
    'sequences `next` may auto-create at most (callers choose the names); past it 409, nothing created; one caller may auto-create a quarter (429 past it)',
  ),
});

export type SequenceSettings = SettingsOf<typeof sequenceSettings>;
