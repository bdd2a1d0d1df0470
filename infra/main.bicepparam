// Parameters for `azd provision` (azd prefers this file to main.parameters.json) and for
// `az deployment sub create --parameters infra/main.bicepparam`. Values come from the environment:
// azd exports the azd environment's values; with az, export them yourself (or pass
// --parameters name=value after this file, which wins). AZURE_ENV_NAME and AZURE_LOCATION are required.
using 'main.bicep'

param environmentName = readEnvironmentVariable('AZURE_ENV_NAME')

param location = readEnvironmentVariable('AZURE_LOCATION')

// Empty: no developer gets data roles (azd sets AZURE_PRINCIPAL_ID to the signed-in user).
param developerPrincipalId = readEnvironmentVariable('AZURE_PRINCIPAL_ID', '')

param developerPrincipalType = readEnvironmentVariable('AZURE_PRINCIPAL_TYPE', 'User')

param nodeVersion = readEnvironmentVariable('TALLYHO_NODE_VERSION', '22')

// Empty: the alerts show in the portal only (docs/operations.md#alerts).
param alertActionGroupId = readEnvironmentVariable('TALLYHO_ALERT_ACTION_GROUP_ID', '')

// keys (the default), entra or keys+entra; the entra modes need the app registration's client id
// (docs/deployment.md, "Microsoft Entra ID": scripts/deploy.sh --auth creates the registration).
param authMode = readEnvironmentVariable('TALLYHO_AUTH_MODE', 'keys')

param entraClientId = readEnvironmentVariable('TALLYHO_ENTRA_CLIENT_ID', '')
