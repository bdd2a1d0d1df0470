using System.Diagnostics;
using System.Net;
using System.Net.Sockets;
using System.Text.Json;
using System.Text.RegularExpressions;

namespace Tallyho.Client.IntegrationTests;

/// <summary>
/// The repository's offline Functions host, started once for the integration tests: <c>node dist/devhost/cli.js</c>
/// (run <c>npm run build</c> first) on a free port with key enforcement on, against the Azurite in
/// <c>TEST_STORAGE_CONNECTION</c> (jest's global setup provides it) or an in-memory Azurite it starts from
/// node_modules on free ports. With <c>TALLYHO_BASE_URL</c> set it targets that host instead (the
/// repository's e2e run starts the devhost or the real Functions host and passes it on), with the keys
/// in <c>TALLYHO_FUNCTION_KEY</c> and <c>TALLYHO_ADMIN_KEY</c> and its storage in <c>TEST_STORAGE_CONNECTION</c>.
/// </summary>
public sealed class DevhostFixture : IAsyncLifetime
{
    private const string OwnFunctionKey = "dotnet-function-key";
    private const string OwnAdminKey = "dotnet-admin-key";

    /// <summary>The host's function key.</summary>
    public static string FunctionKey => External("TALLYHO_FUNCTION_KEY") ?? OwnFunctionKey;

    /// <summary>The host's admin (master) key.</summary>
    public static string AdminKey => External("TALLYHO_ADMIN_KEY") ?? OwnAdminKey;

    /// <summary>A setting that describes the host under test, when one was started for these tests.</summary>
    private static string? External(string name) =>
        string.IsNullOrEmpty(Environment.GetEnvironmentVariable("TALLYHO_BASE_URL")) ? null : Environment.GetEnvironmentVariable(name) is { Length: > 0 } v ? v : null;

    private readonly List<Process> _processes = new();
    private string _output = string.Empty;

    public Uri BaseAddress { get; private set; } = new("http://127.0.0.1");

    /// <summary>The devhost's storage (null for an external host).</summary>
    public string? StorageConnection { get; private set; }

    /// <summary>The repository the devhost runs from (null for an external host).</summary>
    public string? RepoRootPath { get; private set; }

    public string Output => _output;

    /// <summary>A client as an app would have one; each call makes a separate one, as separate processes would.</summary>
    public TallyhoClient Client(Action<TallyhoClientOptions>? configure = null, HttpMessageHandler? handler = null)
    {
        var options = new TallyhoClientOptions { BaseAddress = BaseAddress, FunctionKey = FunctionKey };
        configure?.Invoke(options);
        return handler is null ? new TallyhoClient(options) : new TallyhoClient(new HttpClient(handler) { Timeout = Timeout.InfiniteTimeSpan }, options);
    }

    /// <summary>A client that also holds the admin key.</summary>
    public TallyhoClient Admin() => Client(o => o.AdminKey = AdminKey);

    public async Task InitializeAsync()
    {
        var external = Environment.GetEnvironmentVariable("TALLYHO_BASE_URL");
        if (!string.IsNullOrEmpty(external))
        {
            BaseAddress = new Uri(external);
            StorageConnection = Environment.GetEnvironmentVariable("TEST_STORAGE_CONNECTION") is { Length: > 0 } shared ? shared : null;
            RepoRootPath = StorageConnection is null ? null : RepoRoot();
            return;
        }

        var root = RepoRoot();
        RepoRootPath = root;
        var cli = Path.Combine(root, "dist", "devhost", "cli.js");
        if (!File.Exists(cli))
        {
            throw new InvalidOperationException($"{cli} does not exist: run `npm run build` in {root} first.");
        }

        var storage = Environment.GetEnvironmentVariable("TEST_STORAGE_CONNECTION");
        if (string.IsNullOrEmpty(storage))
        {
            storage = await StartAzuriteAsync(root);
        }

        StorageConnection = storage;
        var hub = "dotnet" + Guid.NewGuid().ToString("N").Substring(0, 12);
        var start = new ProcessStartInfo("node")
        {
            WorkingDirectory = root,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        foreach (var arg in new[] { cli, "--app", root, "--port", "0", "--quiet" })
        {
            start.ArgumentList.Add(arg);
        }

        foreach (var (name, value) in SampleSettings(root))
        {
            start.Environment[name] = value;
        }

        start.Environment["AzureWebJobsStorage"] = storage;
        start.Environment["AzureFunctionsJobHost__extensions__durableTask__hubName"] = hub;
        start.Environment["TALLYHO_TASK_HUB"] = hub;
        start.Environment["FUNCTIONS_KEY"] = OwnFunctionKey;
        start.Environment["FUNCTIONS_ADMIN_KEY"] = OwnAdminKey;
        // Named callers (CallersTests): the key that signs their credentials, this host's own.
        start.Environment["TALLYHO_CREDENTIALS_KEY"] = Convert.ToBase64String(System.Security.Cryptography.RandomNumberGenerator.GetBytes(32));
        // Fast queue polling, as the TypeScript e2e jobs tests use, so a job completes in seconds.
        start.Environment["AzureFunctionsJobHost__extensions__queues__maxPollingInterval"] = "00:00:00.200";
        start.Environment["AzureFunctionsJobHost__extensions__queues__visibilityTimeout"] = "00:00:00";
        start.Environment["TALLYHO_JOBS_RETRY_DELAY_SECONDS"] = "0";

        var devhost = Process.Start(start) ?? throw new InvalidOperationException("node did not start");
        _processes.Add(devhost);
        var listening = new TaskCompletionSource<Uri>(TaskCreationOptions.RunContinuationsAsynchronously);
        void OnLine(object sender, DataReceivedEventArgs e)
        {
            if (e.Data is null)
            {
                return;
            }

            lock (_processes)
            {
                _output += e.Data + "\n";
            }

            var match = Regex.Match(e.Data, @"devhost listening on (\S+)");
            if (match.Success)
            {
                listening.TrySetResult(new Uri(match.Groups[1].Value));
            }
        }

        devhost.OutputDataReceived += OnLine;
        devhost.ErrorDataReceived += OnLine;
        devhost.BeginOutputReadLine();
        devhost.BeginErrorReadLine();
        // Until it listens or exits: no start budget a busy machine could run out of.
        var started = await Task.WhenAny(listening.Task, devhost.WaitForExitAsync());
        if (started != listening.Task)
        {
            throw new InvalidOperationException($"The devhost did not start:\n{_output}");
        }

        BaseAddress = listening.Task.Result;
    }

    public Task DisposeAsync()
    {
        foreach (var process in Enumerable.Reverse(_processes))
        {
            try
            {
                if (!process.HasExited)
                {
                    process.Kill(entireProcessTree: true);
                    process.WaitForExit(10_000);
                }
            }
            catch (InvalidOperationException)
            {
                // Already gone.
            }

            process.Dispose();
        }

        return Task.CompletedTask;
    }

    /// <summary>The text of every blob of one stream writer's log, read with the repository's storage SDK (Node).</summary>
    public async Task<string> ReadStreamLogAsync(string partition, string resource)
    {
        const string script =
            "const { BlobServiceClient } = require(require('path').join(process.argv[1], 'node_modules', '@azure', 'storage-blob'));" +
            "(async () => { const c = BlobServiceClient.fromConnectionString(process.env.STORAGE).getContainerClient('streams');" +
            " const names = []; for await (const b of c.listBlobsFlat({ prefix: process.argv[2] })) names.push(b.name);" +
            " for (const n of names.sort()) process.stdout.write((await c.getBlobClient(n).downloadToBuffer()).toString('utf8')); })()" +
            ".catch((e) => { console.error(e); process.exit(1); });";
        var start = new ProcessStartInfo("node") { UseShellExecute = false, RedirectStandardOutput = true, RedirectStandardError = true };
        foreach (var arg in new[] { "-e", script, RepoRootPath!, $"{partition}/{resource}/" })
        {
            start.ArgumentList.Add(arg);
        }

        start.Environment["STORAGE"] = StorageConnection;
        using var node = Process.Start(start) ?? throw new InvalidOperationException("node did not start");
        var stdout = node.StandardOutput.ReadToEndAsync();
        var stderr = node.StandardError.ReadToEndAsync();
        await node.WaitForExitAsync();
        if (node.ExitCode != 0)
        {
            throw new InvalidOperationException($"Reading the stream log failed: {await stderr}");
        }

        return await stdout;
    }

    private static string RepoRoot()
    {
        var fromEnv = Environment.GetEnvironmentVariable("TALLYHO_REPO_ROOT");
        if (!string.IsNullOrEmpty(fromEnv))
        {
            return fromEnv;
        }

        for (var dir = new DirectoryInfo(AppContext.BaseDirectory); dir is not null; dir = dir.Parent)
        {
            if (File.Exists(Path.Combine(dir.FullName, "package.json")) && Directory.Exists(Path.Combine(dir.FullName, "devhost")))
            {
                return dir.FullName;
            }
        }

        throw new InvalidOperationException("The repository root (package.json beside devhost/) was not found above " + AppContext.BaseDirectory);
    }

    /// <summary>The app's documented defaults, so runs do not depend on a developer's local.settings.json.</summary>
    private static IEnumerable<(string Name, string Value)> SampleSettings(string root)
    {
        var file = Path.Combine(root, "local.settings.sample.json");
        if (!File.Exists(file))
        {
            yield break;
        }

        using var document = JsonDocument.Parse(File.ReadAllText(file));
        if (!document.RootElement.TryGetProperty("Values", out var values))
        {
            yield break;
        }

        foreach (var property in values.EnumerateObject())
        {
            yield return (property.Name, property.Value.ValueKind == JsonValueKind.String ? property.Value.GetString()! : property.Value.GetRawText());
        }
    }

    private static int FreePort()
    {
        using var listener = new TcpListener(IPAddress.Loopback, 0);
        listener.Start();
        return ((IPEndPoint)listener.LocalEndpoint).Port;
    }

    /// <summary>Azurite from node_modules, in memory, on free ports; it exits when our end of its stdin closes.</summary>
    private async Task<string> StartAzuriteAsync(string root)
    {
        const string exitWithParent =
            "const [cli, ...rest] = process.argv.slice(1); process.argv = [process.argv[0], cli, ...rest]; " +
            "process.stdin.on('end', () => process.exit(0)); process.stdin.on('data', () => undefined); require(cli);";
        var ports = (Blob: FreePort(), Queue: FreePort(), Table: FreePort());
        var start = new ProcessStartInfo("node") { UseShellExecute = false, RedirectStandardInput = true };
        foreach (var arg in new[]
        {
            "-e", exitWithParent, "--", Path.Combine(root, "node_modules", "azurite", "dist", "src", "azurite.js"),
            "--blobHost", "127.0.0.1", "--queueHost", "127.0.0.1", "--tableHost", "127.0.0.1",
            "--blobPort", ports.Blob.ToString(), "--queuePort", ports.Queue.ToString(), "--tablePort", ports.Table.ToString(),
            "--inMemoryPersistence", "--silent", "--disableTelemetry", "--skipApiVersionCheck", "--loose",
        })
        {
            start.ArgumentList.Add(arg);
        }

        var azurite = Process.Start(start) ?? throw new InvalidOperationException("node did not start Azurite");
        _processes.Add(azurite);
        foreach (var port in new[] { ports.Blob, ports.Queue, ports.Table })
        {
            while (true)
            {
                try
                {
                    using var probe = new TcpClient();
                    await probe.ConnectAsync(IPAddress.Loopback, port);
                    break;
                }
                catch (SocketException) when (!azurite.HasExited)
                {
                    await Task.Delay(100);
                }
            }
        }

        const string account = "devstoreaccount1";
        const string key = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";
        string Endpoint(int port) => $"http://127.0.0.1:{port}/{account}";
        return $"DefaultEndpointsProtocol=http;AccountName={account};AccountKey={key};BlobEndpoint={Endpoint(ports.Blob)};QueueEndpoint={Endpoint(ports.Queue)};TableEndpoint={Endpoint(ports.Table)}";
    }
}

[CollectionDefinition("devhost")]
public sealed class DevhostCollection : ICollectionFixture<DevhostFixture>
{
}
