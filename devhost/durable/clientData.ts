/**
 * The `durableClient` binding data (extension `BindingHelper.DurableOrchestrationClientToString` and
 * `HttpApiHandler.GetInstanceCreationLinks`/`GetClientResponseLinks`): webhook templates under
 * `/runtime/webhooks/durabletask` on the public port, plus the `rpcBaseUrl` of the extension's own
 * listener, which the JS client uses for every operation.
 */
export interface ClientLinkOptions {
  /** The origin of the links, e.g. http://localhost:7071 (from WEBSITE_HOSTNAME, or the request's Host). */
  readonly origin: string;
  readonly hubName: string;
  readonly connectionName: string;
  /** The extension's system key, which every link carries (`code=`). */
  readonly code: string | undefined;
}

/** The name of the Durable extension's system key on the real host. */
export const durableSystemKeyName = 'durabletask_extension';

export const webhookPath = '/runtime/webhooks/durabletask';
/** The path of the worker-facing API on the extension's own listener (rpcListener.ts). */
export const rpcPath = '/durabletask';

export interface ManagementUrls {
  readonly id: string;
  readonly statusQueryGetUri: string;
  readonly sendEventPostUri: string;
  readonly terminatePostUri: string;
  readonly rewindPostUri: string;
  readonly purgeHistoryDeleteUri: string;
  readonly restartPostUri: string;
  readonly suspendPostUri: string;
  readonly resumePostUri: string;
}

/**
 * The connection as the extension names it in links: the default `AzureWebJobsStorage` is
 * `Storage` (WebJobs resolves `X` as `AzureWebJobsX`); the real host's links say `connection=Storage`
 * (devhost/docs/real-host.md#durable-links).
 */
function linkConnection(name: string): string {
  return name.toLowerCase() === 'azurewebjobsstorage' ? 'Storage' : name;
}

/** Links for one instance (`INSTANCEID` for the template), as the extension builds them. */
export function managementUrls(options: ClientLinkOptions, instanceId: string, encode = true): ManagementUrls {
  const code = options.code === undefined ? '' : `&code=${encodeURIComponent(options.code)}`;
  const query = `taskHub=${encodeURIComponent(options.hubName)}&connection=${encodeURIComponent(linkConnection(options.connectionName))}${code}`;
  const instance = `${options.origin}${webhookPath}/instances/${encode ? encodeURIComponent(instanceId) : instanceId}`;
  return {
    id: instanceId,
    statusQueryGetUri: `${instance}?${query}`,
    sendEventPostUri: `${instance}/raiseEvent/{eventName}?${query}`,
    terminatePostUri: `${instance}/terminate?reason={text}&${query}`,
    rewindPostUri: `${instance}/rewind?reason={text}&${query}`,
    purgeHistoryDeleteUri: `${instance}?${query}`,
    restartPostUri: `${instance}/restart?${query}`,
    suspendPostUri: `${instance}/suspend?reason={text}&${query}`,
    resumePostUri: `${instance}/resume?reason={text}&${query}`,
  };
}

/** `rpcBaseUrl`: where the worker's client calls go (the extension's own listener, `http://127.0.0.1:<port>/durabletask/`). */
export function clientData(options: ClientLinkOptions, rpcBaseUrl: string): Record<string, unknown> {
  const base = `${options.origin}${webhookPath}`;
  const required = options.code === undefined ? '' : `code=${encodeURIComponent(options.code)}`;
  const creation = `${base}/orchestrators/{functionName}[/{instanceId}]`;
  return {
    taskHubName: options.hubName,
    creationUrls: {
      createNewInstancePostUri: `${creation}?${required}`,
      createAndWaitOnNewInstancePostUri: `${creation}?timeout={timeoutInSeconds}&pollingInterval={intervalInSeconds}&${required}`,
    },
    managementUrls: managementUrls(options, 'INSTANCEID', false),
    baseUrl: base,
    requiredQueryStringParameters: required,
    rpcBaseUrl,
  };
}
