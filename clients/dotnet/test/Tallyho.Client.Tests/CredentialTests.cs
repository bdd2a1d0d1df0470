using Azure.Core;
using Microsoft.Extensions.Time.Testing;
using Tallyho.Client.Internal;

namespace Tallyho.Client.Tests;

/// <summary>
/// A fake <see cref="TokenCredential"/>: counts its calls and hands out <c>token-1</c>, <c>token-2</c>, … valid for an
/// hour of the fake clock, or what the test scripts.
/// </summary>
internal sealed class FakeTokenCredential : TokenCredential
{
    private readonly TimeProvider _time;
    private readonly Queue<Func<ValueTask<AccessToken>>> _script = new();
    private readonly List<string[]> _calls = new();
    private int _issued;

    public FakeTokenCredential(TimeProvider time) => _time = time;

    public IReadOnlyList<string[]> Calls
    {
        get
        {
            lock (_calls)
            {
                return _calls.ToArray();
            }
        }
    }

    /// <summary>What the next call does instead of issuing a fresh token.</summary>
    public void Then(Func<ValueTask<AccessToken>> next)
    {
        lock (_calls)
        {
            _script.Enqueue(next);
        }
    }

    public override AccessToken GetToken(TokenRequestContext requestContext, CancellationToken cancellationToken) =>
        GetTokenAsync(requestContext, cancellationToken).AsTask().GetAwaiter().GetResult();

    public override ValueTask<AccessToken> GetTokenAsync(TokenRequestContext requestContext, CancellationToken cancellationToken)
    {
        lock (_calls)
        {
            _calls.Add(requestContext.Scopes);
            if (_script.Count > 0)
            {
                return _script.Dequeue()();
            }

            _issued++;
            return new ValueTask<AccessToken>(new AccessToken($"token-{_issued}", _time.GetUtcNow().AddHours(1)));
        }
    }
}

/// <summary>
/// A credential's token goes as <c>Authorization: Bearer …</c>, fetched once and reused, refreshed before it expires by
/// the rules of Azure.Core's <c>BearerTokenAuthenticationPolicy</c> (Internal/BearerTokenCache.cs: 5 minutes before
/// expiry in the background, 30 s before a failed background refresh is tried again, one fetch shared by every caller
/// waiting). Time is the fake clock's.
/// </summary>
public class CredentialTests
{
    // Azure.Core's defaults (BearerTokenAuthenticationPolicy), pinned here as numbers.
    private static readonly TimeSpan RefreshOffset = TimeSpan.FromMinutes(5);
    private static readonly TimeSpan RetryDelay = TimeSpan.FromSeconds(30);
    private static readonly TimeSpan Hour = TimeSpan.FromHours(1);

    private static (BearerTokenCache Cache, FakeTokenCredential Credential, FakeTimeProvider Time) NewCache()
    {
        var time = new FakeTimeProvider(DateTimeOffset.Parse("2030-01-01T00:00:00Z", System.Globalization.CultureInfo.InvariantCulture));
        var credential = new FakeTokenCredential(time);
        return (new BearerTokenCache(credential, new[] { "api://tallyho-app/.default" }, time), credential, time);
    }

    [Fact]
    public async Task The_token_is_asked_once_for_the_scope_and_reused()
    {
        var (cache, credential, time) = NewCache();
        for (var i = 0; i < 5; i++)
        {
            Assert.Equal("Bearer token-1", await cache.GetHeaderValueAsync(CancellationToken.None));
            time.Advance(TimeSpan.FromMinutes(5));
        }

        Assert.Equal(new[] { "api://tallyho-app/.default" }, Assert.Single(credential.Calls));
    }

    [Fact]
    public async Task Five_minutes_before_expiry_one_refresh_runs_in_the_background_while_requests_keep_the_token_in_hand()
    {
        var (cache, credential, time) = NewCache();
        await cache.GetHeaderValueAsync(CancellationToken.None);
        time.Advance(Hour - RefreshOffset - TimeSpan.FromSeconds(1));
        Assert.Equal("Bearer token-1", await cache.GetHeaderValueAsync(CancellationToken.None));
        Assert.Single(credential.Calls);
        Assert.Null(cache.BackgroundRefresh);

        time.Advance(TimeSpan.FromSeconds(2));
        var pending = new TaskCompletionSource<AccessToken>(TaskCreationOptions.RunContinuationsAsynchronously);
        credential.Then(() => new ValueTask<AccessToken>(pending.Task));
        var answers = await Task.WhenAll(Enumerable.Range(0, 10).Select(_ => cache.GetHeaderValueAsync(CancellationToken.None).AsTask()));
        Assert.All(answers, a => Assert.Equal("Bearer token-1", a));
        await Harness.Eventually(() => credential.Calls.Count == 2, "one background refresh started");

        pending.SetResult(new AccessToken("token-2", time.GetUtcNow() + Hour));
        await cache.BackgroundRefresh!;
        Assert.Equal("Bearer token-2", await cache.GetHeaderValueAsync(CancellationToken.None));
        Assert.Equal(2, credential.Calls.Count);
    }

    [Fact]
    public async Task Concurrent_requests_with_no_token_wait_for_one_fetch_they_share()
    {
        var (cache, credential, _) = NewCache();
        var pending = new TaskCompletionSource<AccessToken>(TaskCreationOptions.RunContinuationsAsynchronously);
        credential.Then(() => new ValueTask<AccessToken>(pending.Task));
        var waiting = Enumerable.Range(0, 10).Select(_ => cache.GetHeaderValueAsync(CancellationToken.None).AsTask()).ToArray();
        await Harness.Eventually(() => credential.Calls.Count == 1, "the fetch started");
        Assert.DoesNotContain(waiting, t => t.IsCompleted);

        pending.SetResult(new AccessToken("shared", DateTimeOffset.MaxValue));
        Assert.All(await Task.WhenAll(waiting), a => Assert.Equal("Bearer shared", a));
        Assert.Single(credential.Calls);
    }

    [Fact]
    public async Task A_failed_background_refresh_keeps_the_token_and_is_tried_again_30_s_later()
    {
        var (cache, credential, time) = NewCache();
        await cache.GetHeaderValueAsync(CancellationToken.None);
        time.Advance(Hour - RefreshOffset);
        credential.Then(() => throw new InvalidOperationException("IMDS is down"));
        Assert.Equal("Bearer token-1", await cache.GetHeaderValueAsync(CancellationToken.None));
        await cache.BackgroundRefresh!;

        time.Advance(RetryDelay - TimeSpan.FromSeconds(1));
        Assert.Equal("Bearer token-1", await cache.GetHeaderValueAsync(CancellationToken.None));
        Assert.Equal(2, credential.Calls.Count);

        time.Advance(TimeSpan.FromSeconds(1));
        Assert.Equal("Bearer token-1", await cache.GetHeaderValueAsync(CancellationToken.None));
        await cache.BackgroundRefresh!;
        Assert.Equal(3, credential.Calls.Count);
        Assert.Equal("Bearer token-2", await cache.GetHeaderValueAsync(CancellationToken.None));
    }

    [Fact]
    public async Task An_expired_token_is_not_sent_and_RefreshOn_from_the_credential_starts_the_refresh_earlier()
    {
        var (cache, credential, time) = NewCache();
        credential.Then(() => new ValueTask<AccessToken>(new AccessToken("early", time.GetUtcNow() + Hour, refreshOn: time.GetUtcNow() + TimeSpan.FromMinutes(10))));
        await cache.GetHeaderValueAsync(CancellationToken.None);
        time.Advance(TimeSpan.FromMinutes(10));
        Assert.Equal("Bearer early", await cache.GetHeaderValueAsync(CancellationToken.None));
        await cache.BackgroundRefresh!;
        Assert.Equal("Bearer token-1", await cache.GetHeaderValueAsync(CancellationToken.None));

        time.Advance(Hour);
        credential.Then(() => new ValueTask<AccessToken>(new AccessToken("after-expiry", time.GetUtcNow() + Hour)));
        Assert.Equal("Bearer after-expiry", await cache.GetHeaderValueAsync(CancellationToken.None));
    }

    [Fact]
    public async Task A_caller_that_gives_up_stops_waiting_and_the_shared_fetch_goes_on_for_the_others()
    {
        var (cache, credential, _) = NewCache();
        var pending = new TaskCompletionSource<AccessToken>(TaskCreationOptions.RunContinuationsAsynchronously);
        credential.Then(() => new ValueTask<AccessToken>(pending.Task));
        using var impatient = new CancellationTokenSource();
        var gaveUp = cache.GetHeaderValueAsync(impatient.Token).AsTask();
        var patient = cache.GetHeaderValueAsync(CancellationToken.None).AsTask();
        impatient.Cancel();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => gaveUp);

        pending.SetResult(new AccessToken("late", DateTimeOffset.MaxValue));
        Assert.Equal("Bearer late", await patient);
        Assert.Single(credential.Calls);
    }

    [Fact]
    public async Task Through_the_client_the_token_goes_as_Authorization_Bearer_beside_the_key()
    {
        var handler = new FakeHandler(_ => FakeHandler.Json(200, new { name = "orders" }));
        var time = new FakeTimeProvider();
        var credential = new FakeTokenCredential(time);
        using var client = Harness.Client(handler, time, o =>
        {
            o.BaseAddress = new Uri("https://tallyho.example.net");
            o.Credential = credential;
            o.Audience = "api://tallyho-app/";
        });

        await client.Sequence("orders").GetAsync();
        await client.Sequence("orders").GetAsync();

        Assert.All(handler.Requests, r => Assert.Equal("Bearer token-1", r.Header("authorization")));
        Assert.All(handler.Requests, r => Assert.Equal("function-key", r.Header("x-functions-key")));
        Assert.Equal(new[] { "api://tallyho-app/.default" }, Assert.Single(credential.Calls));
    }

    [Fact]
    public async Task A_credential_that_gives_no_token_is_a_TallyhoException_and_nothing_is_sent()
    {
        var handler = new FakeHandler(_ => FakeHandler.Json(200, new { name = "orders" }));
        var time = new FakeTimeProvider();
        var credential = new FakeTokenCredential(time);
        credential.Then(() => throw new InvalidOperationException("no identity here"));
        using var client = Harness.Client(handler, time, o =>
        {
            o.BaseAddress = new Uri("http://127.0.0.1:7071");
            o.Credential = credential;
            o.Scopes = new[] { "api://tallyho-app/Tallyho.Use" };
        });

        var ex = await Assert.ThrowsAsync<TallyhoException>(() => client.Sequence("orders").GetAsync());

        Assert.Equal("Credential", ex.Code);
        Assert.IsType<InvalidOperationException>(ex.InnerException);
        Assert.Empty(handler.Requests);
        Assert.Equal(new[] { "api://tallyho-app/Tallyho.Use" }, Assert.Single(credential.Calls));
    }

    [Fact]
    public async Task A_Tallyho_credential_is_sent_as_it_is()
    {
        var handler = new FakeHandler(_ => FakeHandler.Json(200, new { name = "orders" }));
        var options = new TallyhoClientOptions { TimeProvider = new FakeTimeProvider() };
        using var client = new TallyhoClient(new Uri("https://tallyho.example.net"), new TallyhoCredential("tly1.eyJhbGciOiJIUzI1NiJ9.e30.sig"), options);
        using var http = new HttpClient(handler);
        using var injected = new TallyhoClient(http, new TallyhoClientOptions { BaseAddress = new Uri("http://localhost:7071"), Credential = new TallyhoCredential("tly1.abc") });

        await injected.Sequence("orders").GetAsync();

        Assert.Equal("Bearer tly1.abc", Assert.Single(handler.Requests).Header("authorization"));
        Assert.Throws<ArgumentException>(() => new TallyhoCredential("a-function-key"));
    }

    [Theory]
    [InlineData("http://tallyho.example.net", "api://tallyho-app", "only over https")]
    [InlineData("https://tallyho.example.net", null, "Audience")]
    public void A_token_credential_is_refused_when_the_client_is_made(string baseAddress, string? audience, string message)
    {
        var ex = Assert.Throws<ArgumentException>(() =>
            new TallyhoClient(new Uri(baseAddress), new FakeTokenCredential(TimeProvider.System), new TallyhoClientOptions { Audience = audience }));

        Assert.Contains(message, ex.Message, StringComparison.Ordinal);
    }
}
