// The `e2e-real` projects run the same files on the real Functions host (test/e2e/support/harness.ts reads this).
process.env.E2E_HOST = 'real';
