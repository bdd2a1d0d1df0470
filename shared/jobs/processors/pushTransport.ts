/** How webhook processors' batches leave the app: a port the composition root fills (shared/app/ports.ts) with the webhook guard and caller of shared/effects/webhook. */
export interface PushTransport {
  /** Why `url` may not be called, or undefined (the allow-list and address checks of webhook schedule targets). */
  urlIssue(url: string): string | undefined;
  post(
    url: string,
    body: string,
    headers: Readonly<Record<string, string>>,
    timeoutMs: number,
  ): Promise<{ readonly status: number; readonly body: string; readonly retryAfter: string | undefined }>;
}
