/** The signing key setting (shared/settings.ts explains the declarations). */
import { custom, group, SettingProblems } from '../settings';
import { parseSigningKey } from './signer';

/** Never echoes the value: a problem names what is wrong with it only. */
function signingKey(text: string): Buffer | undefined | SettingProblems {
  const key = parseSigningKey(text);
  return typeof key === 'string' ? new SettingProblems([key]) : key;
}

export const signingSettings = group({
  key: custom(
    'TALLYHO_SIGNING_KEY',
    undefined as Buffer | undefined,
    '',
    'base64, ≥ 32 bytes: MAC key for job envelopes and keyed job ids (unset: random, kept in `secrets`)',
    signingKey,
  ),
});
