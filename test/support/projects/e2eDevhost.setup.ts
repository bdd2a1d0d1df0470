// The `e2e` projects run their files on the devhost (test/e2e/support/harness.ts reads this).
process.env.E2E_HOST = 'devhost';
