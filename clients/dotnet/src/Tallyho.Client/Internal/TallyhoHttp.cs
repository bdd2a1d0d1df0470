using System.Net.Http.Headers;
using System.Text.Json;
using Azure.Core;

namespace Tallyho.Client.Internal;

/// <summary>
/// Sends API calls: keys by header, a credential's token as <c>Authorization: Bearer</c> (<see cref="BearerTokenCache"/>), JSON bodies with <c>Content-Type: application/json</c>, retries of
/// 429/502/503/504 and lost connections with <c>Retry-After</c> honoured and jittered back-off otherwise,
/// and problem+json answers turned into <see cref="TallyhoException"/>.
/// </summary>
internal sealed class TallyhoHttp
{
    private static readonly MediaTypeHeaderValue JsonType = new("application/json");
    private readonly HttpClient _http;
    private readonly Uri _baseAddress;
    private readonly BearerTokenCache? _authorization;

    public TallyhoHttp(HttpClient http, TallyhoClientOptions options, Uri? baseAddress = null, TokenCredential? credential = null)
    {
        _http = http;
        Options = options;
        baseAddress ??= options.BaseAddress ?? http.BaseAddress
            ?? throw new ArgumentException("Set TallyhoClientOptions.BaseAddress or the HttpClient's BaseAddress.", nameof(options));
        _baseAddress = ApiRoot(baseAddress);
        Time = options.TimeProvider;
        Backoff = new Backoff(options.Jitter);
        _authorization = Authorization(credential ?? options.Credential, options, _baseAddress, Time);
    }

    public TallyhoClientOptions Options { get; }

    public TimeProvider Time { get; }

    public Backoff Backoff { get; }

    /// <summary>
    /// The API root a base address names. Both clients take the app's address with or without the <c>/api</c>
    /// route prefix (fixed by the app's host.json), so an address copied from the portal (the app) and one
    /// copied from a curl example (the API) both work; a trailing slash changes nothing. A query or fragment
    /// would end up inside every path, so it is refused rather than becoming a 404.
    /// </summary>
    /// <param name="baseAddress">The address the caller gave.</param>
    /// <returns>The API root, ending in <c>/api/</c>.</returns>
    public static Uri ApiRoot(Uri baseAddress)
    {
        if (!baseAddress.IsAbsoluteUri)
        {
            throw new ArgumentException($"The base address must be absolute: {baseAddress}", nameof(baseAddress));
        }

        if (baseAddress.Query.Length > 0 || baseAddress.Fragment.Length > 0)
        {
            throw new ArgumentException($"The base address must not have a query or fragment: {baseAddress}", nameof(baseAddress));
        }

        var root = baseAddress.AbsoluteUri.TrimEnd('/');
        return new Uri(root.EndsWith("/api", StringComparison.Ordinal) ? root + "/" : root + "/api/");
    }

    /// <summary>The token cache for a credential, with the scopes it asks for; null without a credential.</summary>
    private static BearerTokenCache? Authorization(TokenCredential? credential, TallyhoClientOptions options, Uri apiRoot, TimeProvider time)
    {
        if (credential is null)
        {
            return null;
        }

        // Bearer tokens travel only where nobody else can read them: https, or this machine.
        if (apiRoot.Scheme != Uri.UriSchemeHttps && !(apiRoot.Scheme == Uri.UriSchemeHttp && apiRoot.IsLoopback))
        {
            throw new ArgumentException($"A credential is sent only over https (http only to this machine): {apiRoot}", nameof(options));
        }

        IReadOnlyList<string> scopes;
        if (options.Scopes is not null)
        {
            scopes = options.Scopes.Count > 0 && options.Scopes.All(s => !string.IsNullOrWhiteSpace(s))
                ? options.Scopes
                : throw new ArgumentException("Scopes must name at least one scope.", nameof(options));
        }
        else if (!string.IsNullOrWhiteSpace(options.Audience))
        {
            scopes = new[] { options.Audience!.Trim().TrimEnd('/') + "/.default" };
        }
        else
        {
            scopes = credential is TallyhoCredential
                ? Array.Empty<string>()
                : throw new ArgumentException(
                    "A token credential needs the app's audience: set TallyhoClientOptions.Audience to the Tallyho app registration's Application ID URI (api://<app id>), or Scopes.",
                    nameof(options));
        }

        return new BearerTokenCache(credential, scopes, time);
    }

    public static string Segment(string value) => Uri.EscapeDataString(Guard.NotEmpty(value, nameof(value)));

    public Uri Resolve(string path) => new(_baseAddress, path);

    public async Task<T> SendJsonAsync<T>(TallyhoRequest request, CancellationToken cancellationToken)
    {
        using var response = await SendAsync(request, cancellationToken).ConfigureAwait(false);
        return await ReadJsonAsync<T>(response, cancellationToken).ConfigureAwait(false);
    }

    public static async Task<T> ReadJsonAsync<T>(HttpResponseMessage response, CancellationToken cancellationToken)
    {
        var bytes = await ReadBytesAsync(response.Content, cancellationToken).ConfigureAwait(false);
        try
        {
            return Json.Deserialize<T>(bytes, $"{response.RequestMessage?.Method} {response.RequestMessage?.RequestUri?.AbsolutePath}");
        }
        catch (JsonException ex)
        {
            throw new TallyhoException((int)response.StatusCode, "InvalidResponse", $"The answer is not the expected JSON: {ex.Message}", innerException: ex);
        }
    }

    public async Task<HttpResponseMessage> SendAsync(TallyhoRequest request, CancellationToken cancellationToken)
    {
        var body = request.Body is null ? null : Json.Serialize(request.Body);
        var maxRetries = request.MaxRetries ?? Options.MaxRetries;
        for (var attempt = 0; ; attempt++)
        {
            HttpResponseMessage response;
            var authorization = await AuthorizationAsync(cancellationToken).ConfigureAwait(false);
            using (var message = Build(request, body, authorization))
            {
                try
                {
                    var completion = request.Streaming ? HttpCompletionOption.ResponseHeadersRead : HttpCompletionOption.ResponseContentRead;
                    response = await _http.SendAsync(message, completion, cancellationToken).ConfigureAwait(false);
                }
                catch (Exception ex) when (IsTransport(ex, cancellationToken) && request.Idempotent && attempt < maxRetries)
                {
                    await Clock.Sleep(Time, Backoff.Delay(attempt, Options.RetryBaseDelay, Options.RetryMaxDelay), cancellationToken).ConfigureAwait(false);
                    continue;
                }
                catch (Exception ex) when (IsTransport(ex, cancellationToken))
                {
                    throw new TallyhoException(0, "ConnectionFailed", $"{request.Method} {Resolve(request.Path)}: {ex.Message}", innerException: ex);
                }
            }

            var status = (int)response.StatusCode;
            if (response.IsSuccessStatusCode || request.Expected.Contains(status))
            {
                return response;
            }

            if (attempt < maxRetries && Retryable(status, request.Idempotent))
            {
                var delay = RetryAfter(response) ?? Backoff.Delay(attempt, Options.RetryBaseDelay, Options.RetryMaxDelay);
                response.Dispose();
                await Clock.Sleep(Time, delay > Options.RetryMaxDelay ? Options.RetryMaxDelay : delay, cancellationToken).ConfigureAwait(false);
                continue;
            }

            using (response)
            {
                throw await ToExceptionAsync(response, cancellationToken).ConfigureAwait(false);
            }
        }
    }

    /// <summary>The problem document of a failed answer as an exception (any body that is not one is summarised).</summary>
    public static async Task<TallyhoException> ToExceptionAsync(HttpResponseMessage response, CancellationToken cancellationToken)
    {
        var status = (int)response.StatusCode;
        var retryAfter = RetryAfter(response);
        // The whole URL tried leads the message, so a wrong base address shows in the first error it causes.
        var tried = response.RequestMessage?.RequestUri is { } uri ? $"{response.RequestMessage.Method} {uri}: " : string.Empty;
        var bytes = await ReadBytesAsync(response.Content, cancellationToken).ConfigureAwait(false);
        try
        {
            using var document = JsonDocument.Parse(bytes);
            var root = document.RootElement;
            if (root.ValueKind == JsonValueKind.Object && root.TryGetProperty("code", out var code) && code.ValueKind == JsonValueKind.String)
            {
                var detail = root.TryGetProperty("detail", out var d) && d.ValueKind == JsonValueKind.String ? d.GetString() : null;
                var title = root.TryGetProperty("title", out var t) && t.ValueKind == JsonValueKind.String ? t.GetString() : null;
                var issues = new List<TallyhoIssue>();
                if (root.TryGetProperty("issues", out var list) && list.ValueKind == JsonValueKind.Array)
                {
                    foreach (var issue in list.EnumerateArray())
                    {
                        issues.Add(new TallyhoIssue(
                            issue.TryGetProperty("path", out var p) ? p.GetString() ?? string.Empty : string.Empty,
                            issue.TryGetProperty("message", out var m) ? m.GetString() ?? string.Empty : string.Empty));
                    }
                }

                return new TallyhoException(status, code.GetString()!, tried + (detail ?? title ?? $"HTTP {status}"), retryAfter, issues, root.Clone());
            }
        }
        catch (JsonException)
        {
            // Not JSON: described below.
        }

        var text = System.Text.Encoding.UTF8.GetString(bytes);
        var summary = text.Length > 200 ? text.Substring(0, 200) : text;
        return new TallyhoException(status, $"Http{status}", $"{tried}HTTP {status} {response.ReasonPhrase}{(summary.Length == 0 ? string.Empty : ": " + summary)}", retryAfter);
    }

    private static bool Retryable(int status, bool idempotent) => status is 429 or 503 || (idempotent && status is 502 or 504);

    private static bool IsTransport(Exception ex, CancellationToken cancellationToken) =>
        ex is HttpRequestException || ex is IOException || (ex is OperationCanceledException && !cancellationToken.IsCancellationRequested);

    private static TimeSpan? RetryAfter(HttpResponseMessage response)
    {
        var header = response.Headers.RetryAfter;
        if (header?.Delta is { } delta)
        {
            return delta;
        }

        if (header?.Date is { } date)
        {
            var wait = date - DateTimeOffset.UtcNow;
            return wait > TimeSpan.Zero ? wait : TimeSpan.Zero;
        }

        return null;
    }

    private static async Task<byte[]> ReadBytesAsync(HttpContent? content, CancellationToken cancellationToken)
    {
        if (content is null)
        {
            return Array.Empty<byte>();
        }
#if NET8_0_OR_GREATER
        return await content.ReadAsByteArrayAsync(cancellationToken).ConfigureAwait(false);
#else
        cancellationToken.ThrowIfCancellationRequested();
        return await content.ReadAsByteArrayAsync().ConfigureAwait(false);
#endif
    }

    /// <summary>The <c>Authorization</c> header value, or null without a credential; a credential that fails is a <see cref="TallyhoException"/> (not retried: its cache has its own rules).</summary>
    private async ValueTask<string?> AuthorizationAsync(CancellationToken cancellationToken)
    {
        if (_authorization is null)
        {
            return null;
        }

        try
        {
            return await _authorization.GetHeaderValueAsync(cancellationToken).ConfigureAwait(false);
        }
        catch (Exception ex) when (!(ex is OperationCanceledException && cancellationToken.IsCancellationRequested))
        {
            throw new TallyhoException(0, "Credential", $"The token credential gave no token: {ex.Message}", innerException: ex);
        }
    }

    private HttpRequestMessage Build(TallyhoRequest request, byte[]? body, string? authorization)
    {
        var message = new HttpRequestMessage(request.Method, Resolve(request.Path));
        var key = request.Key == KeyLevel.Admin ? Options.AdminKey ?? Options.FunctionKey : Options.FunctionKey ?? Options.AdminKey;
        if (key is not null)
        {
            message.Headers.TryAddWithoutValidation("x-functions-key", key);
        }

        if (authorization is not null)
        {
            message.Headers.TryAddWithoutValidation("Authorization", authorization);
        }

        if (request.IdempotencyKey is not null)
        {
            message.Headers.TryAddWithoutValidation("Idempotency-Key", request.IdempotencyKey);
        }

        if (request.Headers is not null)
        {
            foreach (var header in request.Headers)
            {
                message.Headers.TryAddWithoutValidation(header.Key, header.Value);
            }
        }

        if (body is not null)
        {
            message.Content = new ByteArrayContent(body);
            message.Content.Headers.ContentType = JsonType;
        }

        return message;
    }

}
