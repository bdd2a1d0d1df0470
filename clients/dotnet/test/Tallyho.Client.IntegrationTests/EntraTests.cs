using Azure.Identity;

namespace Tallyho.Client.IntegrationTests;

/// <summary>
/// A test that needs a host in <c>entra</c> mode and a tenant stand-in (test/support/localTenant.ts), which the repository's
/// e2e run (test/e2e/dotnet-client.test.ts) starts and names in <c>TALLYHO_ENTRA_BASE_URL</c>, <c>TALLYHO_ENTRA_AUDIENCE</c>
/// and App Service's <c>IDENTITY_ENDPOINT</c> / <c>IDENTITY_HEADER</c>. Without them it is skipped, saying so; that run
/// fails when any test is skipped.
/// </summary>
public sealed class EntraFactAttribute : FactAttribute
{
    public EntraFactAttribute()
    {
        if (string.IsNullOrEmpty(System.Environment.GetEnvironmentVariable("TALLYHO_ENTRA_BASE_URL")))
        {
            Skip = "needs a host in entra mode and a tenant stand-in: run through test/e2e/dotnet-client.test.ts";
        }
    }
}

/// <summary>
/// The client with the real <see cref="DefaultAzureCredential"/> of Azure.Identity, which gets its tokens by its managed
/// identity path from the tenant stand-in, against a host in <c>entra</c> mode that checks them against the stand-in's
/// signing keys: answered with the credential, 401 without it or with only a function key. The page's Entra example
/// (docs/client-dotnet.md, fenced <c>csharp entra</c>) is the body of the last test, as printed; the jest side checks that.
/// </summary>
public class EntraTests
{
    private static Uri EntraHost => new(System.Environment.GetEnvironmentVariable("TALLYHO_ENTRA_BASE_URL")!);

    private static string Audience => System.Environment.GetEnvironmentVariable("TALLYHO_ENTRA_AUDIENCE")!;

    [EntraFact]
    public async Task DefaultAzureCredential_is_answered_where_no_credential_or_only_a_key_is_401()
    {
        var name = $"entra-{Guid.NewGuid():N}".Substring(0, 30);
        await using (var client = new TallyhoClient(EntraHost, new DefaultAzureCredential(), new TallyhoClientOptions { Audience = Audience }))
        {
            await client.Counters.CreateAsync(name);
            await client.Counters.IncrementAsync(name, 2);
            await client.Counters.FlushAsync();
            Assert.Equal(2, (await client.Counters.GetAsync(name, consistent: true)).Value);
        }

        foreach (var key in new[] { null, DevhostFixture.FunctionKey })
        {
            await using var stranger = new TallyhoClient(new TallyhoClientOptions { BaseAddress = EntraHost, FunctionKey = key, MaxRetries = 0 });
            var ex = await Assert.ThrowsAsync<TallyhoException>(() => stranger.Counters.GetAsync(name));
            Assert.Equal((401, "Unauthorized"), (ex.StatusCode, ex.Code));
        }
    }

    [EntraFact]
    public async Task The_pages_Entra_example_runs_as_printed()
    {
        // --- docs/client-dotnet.md, "Microsoft Entra ID", as printed (its using directives are at the top of this file) ---
        await using var tallyho = new TallyhoClient(
            new Uri(Environment.GetEnvironmentVariable("TALLYHO_BASE_URL") ?? "https://tallyho.example.net"),
            new DefaultAzureCredential(),
            new TallyhoClientOptions { Audience = Environment.GetEnvironmentVariable("TALLYHO_AUDIENCE") ?? "api://00000000-0000-0000-0000-000000000000" });

        await tallyho.Counters.CreateAsync("logins"); // the Tallyho.Admin app role
        await tallyho.Counters.IncrementAsync("logins"); // Tallyho.Submitter
        await tallyho.Counters.FlushAsync();
        Console.WriteLine($"logins: {(await tallyho.Counters.GetAsync("logins", consistent: true)).Value}"); // logins: 1
        // --- end of the example ---

        Assert.Equal(new[] { "logins: 1" }, Console.Lines);
    }

    /// <summary>What the example reads from its environment: the Entra host's address and audience.</summary>
    private static class Environment
    {
        public static string? GetEnvironmentVariable(string name) => name switch
        {
            "TALLYHO_BASE_URL" => EntraHost.ToString(),
            "TALLYHO_AUDIENCE" => Audience,
            _ => System.Environment.GetEnvironmentVariable(name),
        };
    }

    /// <summary>Where the example prints, so the test can read it.</summary>
    private static class Console
    {
        public static readonly List<string> Lines = new();

        public static void WriteLine(string line) => Lines.Add(line);
    }
}
