export default async function globalTeardown(): Promise<void> {
  await globalThis.__AZURITE_STOP__?.();
}
