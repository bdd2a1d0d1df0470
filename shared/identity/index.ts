/** Who calls: one Caller per request (shared/identity/caller.ts); what the app's root uses of it. */
export { identitySettings } from './settings';
