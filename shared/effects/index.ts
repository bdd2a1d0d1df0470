/** What a gate run or a schedule can make happen: the rules that admit an effect, the ports it runs through, the webhook caller. */
export { effectIssues, type EffectRules, webhookIssue } from './admission';
export type { EffectPorts, GateReleasePort, JobPort } from './runner';
export { parseAllowList } from './webhook/allowList';
export { callWebhook } from './webhook/call';
