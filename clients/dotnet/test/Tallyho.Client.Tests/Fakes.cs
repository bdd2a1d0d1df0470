using System.Net;
using System.Text;
using System.Text.Json;
using Microsoft.Extensions.Time.Testing;

namespace Tallyho.Client.Tests;

/// <summary>A request as the fake handler saw it.</summary>
internal sealed record Recorded(HttpMethod Method, Uri Uri, IReadOnlyDictionary<string, string> Headers, string? Body, string? ContentType)
{
    public string? Header(string name) => Headers.TryGetValue(name.ToLowerInvariant(), out var v) ? v : null;

    public JsonElement Json() => JsonDocument.Parse(Body ?? "null").RootElement.Clone();
}

/// <summary>An HttpMessageHandler that records each request and answers with a script.</summary>
internal sealed class FakeHandler : HttpMessageHandler
{
    private readonly Func<Recorded, CancellationToken, Task<HttpResponseMessage>> _respond;
    private readonly List<Recorded> _requests = new();

    /// <summary>Answers with the request's cancellation token at hand (a long poll that only its caller ends).</summary>
    public FakeHandler(Func<Recorded, CancellationToken, Task<HttpResponseMessage>> respond) => _respond = respond;

    public FakeHandler(Func<Recorded, Task<HttpResponseMessage>> respond)
        : this((r, _) => respond(r))
    {
    }

    public FakeHandler(Func<Recorded, HttpResponseMessage> respond)
        : this(r => Task.FromResult(respond(r)))
    {
    }

    public IReadOnlyList<Recorded> Requests
    {
        get
        {
            lock (_requests)
            {
                return _requests.ToArray();
            }
        }
    }

    public static HttpResponseMessage Json(int status, object body, params (string Name, string Value)[] headers)
    {
        var response = new HttpResponseMessage((HttpStatusCode)status)
        {
            Content = new StringContent(JsonSerializer.Serialize(body), Encoding.UTF8, "application/json"),
        };
        foreach (var (name, value) in headers)
        {
            response.Headers.TryAddWithoutValidation(name, value);
        }

        return response;
    }

    public static HttpResponseMessage Problem(int status, string code, string detail = "detail", int? retryAfterSeconds = null, object? issues = null)
    {
        var response = new HttpResponseMessage((HttpStatusCode)status)
        {
            Content = new StringContent(
                JsonSerializer.Serialize(new { type = $"urn:tallyho:problem:{code}", title = code, status, detail, code, issues }),
                Encoding.UTF8,
                "application/problem+json"),
        };
        if (retryAfterSeconds is not null)
        {
            response.Headers.TryAddWithoutValidation("Retry-After", retryAfterSeconds.Value.ToString(System.Globalization.CultureInfo.InvariantCulture));
        }

        return response;
    }

    protected override async Task<HttpResponseMessage> SendAsync(HttpRequestMessage request, CancellationToken cancellationToken)
    {
        var body = request.Content is null ? null : await request.Content.ReadAsStringAsync(cancellationToken);
        var headers = request.Headers.ToDictionary(h => h.Key.ToLowerInvariant(), h => string.Join(",", h.Value));
        var recorded = new Recorded(request.Method, request.RequestUri!, headers, body, request.Content?.Headers.ContentType?.ToString());
        lock (_requests)
        {
            _requests.Add(recorded);
        }

        var response = await _respond(recorded, cancellationToken);
        response.RequestMessage = request;
        return response;
    }
}

internal static class Harness
{
    public static readonly Uri Base = new("http://tallyho.test");

    public static TallyhoClient Client(FakeHandler handler, FakeTimeProvider time, Action<TallyhoClientOptions>? configure = null)
    {
        var options = new TallyhoClientOptions
        {
            BaseAddress = Base,
            FunctionKey = "function-key",
            AdminKey = "admin-key",
            TimeProvider = time,
            Jitter = () => 0.5,
        };
        configure?.Invoke(options);
        return new TallyhoClient(new HttpClient(handler), options);
    }

    /// <summary>Advances fake time in steps until the task completes (timers fire only when time moves).</summary>
    public static async Task<T> Drive<T>(FakeTimeProvider time, Task<T> task, TimeSpan step, int maxSteps = 2000)
    {
        for (var i = 0; i < maxSteps && !task.IsCompleted; i++)
        {
            await Task.Delay(1);
            time.Advance(step);
        }

        Assert.True(task.IsCompleted, $"Still running after {maxSteps} steps of {step}.");
        return await task;
    }

    /// <summary>Real-time wait for a condition that background work makes true.</summary>
    public static async Task Eventually(Func<bool> condition, string what)
    {
        for (var i = 0; i < 500 && !condition(); i++)
        {
            await Task.Delay(10);
        }

        Assert.True(condition(), what);
    }
}
