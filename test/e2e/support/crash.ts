/**
 * Host settings for the tests that kill a host (SIGKILL) and check what a restarted one does. The
 * Durable messages and work items a killed real host had fetched come back only after the task hub's
 * visibility timeouts, five minutes each by default (Durable Functions host.json reference). These set
 * both to one minute: the least the control queue's takes, as the extension refuses to start below it
 * ("ControlQueueVisibilityTimeout must be between 1 and 60 minutes", on the real host; see
 * devhost/docs/real-host.md, Shutdown). The devhost checks the same bound (devhost/app/hostConfig.ts)
 * and does not use the values.
 */
const storageProvider = 'AzureFunctionsJobHost__extensions__durableTask__storageProvider__';

export const killedHostWorkBackWithinAMinute: Readonly<Record<string, string>> = {
  [`${storageProvider}controlQueueVisibilityTimeout`]: '00:01:00',
  [`${storageProvider}workItemQueueVisibilityTimeout`]: '00:01:00',
};
