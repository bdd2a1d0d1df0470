/**
 * The real Azure Functions host as an optional tool: a host build named by FUNCTIONS_HOST_BUILD (a
 * folder holding Microsoft.Azure.WebJobs.Script.WebHost.dll, or a .tar.gz of one) and the .NET SDK
 * to run it and to build the app's extensions. With both, the e2e suites run a second time, on the
 * real host (the `e2e-real` jest project); `.ci/run` provides them and CI=true requires them.
 */
const { existsSync } = require('node:fs');

const { onPath } = require('./optionalTool.cjs');

const realHostTool = {
  name: 'the real Functions host (FUNCTIONS_HOST_BUILD and dotnet)',
  neededBy: 'the end-to-end suites on the real Functions host',
  enable:
    'set FUNCTIONS_HOST_BUILD to a build of the Azure Functions host (a folder with Microsoft.Azure.WebJobs.Script.WebHost.dll, or a .tar.gz of one) and install the .NET SDK; see docs/local-development.md#the-real-functions-host',
  locate() {
    const build = process.env.FUNCTIONS_HOST_BUILD?.trim();
    if (build === undefined || build === '' || !existsSync(build)) return undefined;
    return onPath('dotnet') === undefined ? undefined : build;
  },
};

module.exports = { realHostTool };
