using System.Text.Json;

namespace Tallyho.Client;

/// <summary>One problem with one field of a request, as the server reports it in a 400.</summary>
/// <param name="Path">The field, e.g. <c>body.count</c>.</param>
/// <param name="Message">What is wrong with it.</param>
public sealed record TallyhoIssue(string Path, string Message);

/// <summary>
/// A request the Tallyho API refused or could not serve. <see cref="Code"/> is the server's error code
/// from its <c>application/problem+json</c> answer (<c>NotFound</c>, <c>Conflict</c>, <c>ValidationFailed</c>,
/// <c>TooManyRequests</c>, <c>ConcurrencyExhausted</c>, <c>DependencyUnavailable</c>, ...).
/// </summary>
public class TallyhoException : Exception
{
    /// <summary>Creates an exception from the parts of a problem answer.</summary>
    /// <param name="statusCode">The HTTP status code.</param>
    /// <param name="code">The server's error code, or <c>Http&lt;status&gt;</c> when the answer was not a problem document.</param>
    /// <param name="message">The problem's detail (or a description of the failure).</param>
    /// <param name="retryAfter">The delay the server asked for, if any.</param>
    /// <param name="issues">Field issues of a validation failure.</param>
    /// <param name="problem">The whole problem document, when there was one.</param>
    /// <param name="innerException">The failure that caused this one, if any.</param>
    public TallyhoException(
        int statusCode,
        string code,
        string message,
        TimeSpan? retryAfter = null,
        IReadOnlyList<TallyhoIssue>? issues = null,
        JsonElement? problem = null,
        Exception? innerException = null)
        : base(message, innerException)
    {
        StatusCode = statusCode;
        Code = code;
        RetryAfter = retryAfter;
        Issues = issues ?? Array.Empty<TallyhoIssue>();
        Problem = problem;
    }

    /// <summary>The HTTP status code of the answer.</summary>
    public int StatusCode { get; }

    /// <summary>The server's error code (the problem document's <c>code</c> member).</summary>
    public string Code { get; }

    /// <summary>The delay the server asked for in <c>Retry-After</c>, if any.</summary>
    public TimeSpan? RetryAfter { get; }

    /// <summary>Field issues of a validation failure (empty otherwise).</summary>
    public IReadOnlyList<TallyhoIssue> Issues { get; }

    /// <summary>The whole problem document, including extension members such as the differing settings of a 409.</summary>
    public JsonElement? Problem { get; }

    /// <summary>Whether trying again later may succeed (429, 502, 503, 504).</summary>
    public bool IsRetryable => StatusCode is 429 or 502 or 503 or 504;
}
