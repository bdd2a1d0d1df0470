using System.Security.Cryptography;
using System.Text;
using System.Text.Json;
using Tallyho.Client.Internal;

namespace Tallyho.Client.Jobs;

/// <summary>
/// Verifies a webhook processor's push per the Standard Webhooks specification: the signed content is
/// <c>webhook-id.webhook-timestamp.body</c>, HMAC-SHA256 under the secret's bytes (the base64 after <c>whsec_</c>),
/// sent in <c>webhook-signature</c> as space-separated <c>v1,&lt;base64&gt;</c> (two during a secret rotation). The
/// timestamp must be within the tolerance of now, so a captured push cannot be replayed later.
/// </summary>
public sealed class WebhookVerifier
{
    private readonly byte[] _key;
    private readonly TimeProvider _time;

    /// <summary>Creates a verifier for one processor's secret.</summary>
    /// <param name="secret"><c>whsec_…</c>, as the processor's declaration (or rotation) answered it.</param>
    /// <param name="time">The clock (default: the system's).</param>
    public WebhookVerifier(string secret, TimeProvider? time = null)
    {
        Guard.NotEmpty(secret, nameof(secret));
        _key = Convert.FromBase64String(secret.StartsWith("whsec_", StringComparison.Ordinal) ? secret.Substring(6) : secret);
        _time = time ?? TimeProvider.System;
    }

    /// <summary>How far the timestamp may be from now (default five minutes).</summary>
    public TimeSpan Tolerance { get; init; } = TimeSpan.FromMinutes(5);

    /// <summary>Whether the push is authentic and fresh.</summary>
    /// <param name="id">The <c>webhook-id</c> header.</param>
    /// <param name="timestamp">The <c>webhook-timestamp</c> header.</param>
    /// <param name="signature">The <c>webhook-signature</c> header.</param>
    /// <param name="body">The body exactly as received.</param>
    /// <returns>True when a signature matches and the timestamp is within the tolerance.</returns>
    public bool IsValid(string? id, string? timestamp, string? signature, string body)
    {
        if (string.IsNullOrEmpty(id) || string.IsNullOrEmpty(timestamp) || string.IsNullOrEmpty(signature) || body is null)
        {
            return false;
        }

        if (!long.TryParse(timestamp, System.Globalization.NumberStyles.None, System.Globalization.CultureInfo.InvariantCulture, out var sent))
        {
            return false;
        }

        var now = _time.GetUtcNow().ToUnixTimeSeconds();
        if (Math.Abs(now - sent) > Tolerance.TotalSeconds)
        {
            return false;
        }

        using var hmac = new HMACSHA256(_key);
        var expected = Encoding.ASCII.GetBytes("v1," + Convert.ToBase64String(hmac.ComputeHash(Encoding.UTF8.GetBytes($"{id}.{timestamp}.{body}"))));
        var matched = false;
        foreach (var candidate in signature!.Split(' '))
        {
            matched |= FixedTimeEquals(Encoding.ASCII.GetBytes(candidate), expected);
        }

        return matched;
    }

    /// <summary>The push's body as <typeparamref name="T"/> when it verifies; throws otherwise.</summary>
    /// <typeparam name="T">The body's type, e.g. a record with the items.</typeparam>
    /// <param name="id">The <c>webhook-id</c> header.</param>
    /// <param name="timestamp">The <c>webhook-timestamp</c> header.</param>
    /// <param name="signature">The <c>webhook-signature</c> header.</param>
    /// <param name="body">The body exactly as received.</param>
    /// <returns>The parsed body.</returns>
    /// <exception cref="UnauthorizedAccessException">When no signature matches or the timestamp is stale.</exception>
    public T Verify<T>(string? id, string? timestamp, string? signature, string body)
    {
        if (!IsValid(id, timestamp, signature, body))
        {
            throw new UnauthorizedAccessException("The push's signature does not verify (or its timestamp is too far from now).");
        }

        return JsonSerializer.Deserialize<T>(body, Json.Options)!;
    }

    private static bool FixedTimeEquals(byte[] a, byte[] b)
    {
#if NET8_0_OR_GREATER
        return CryptographicOperations.FixedTimeEquals(a, b);
#else
        var diff = a.Length ^ b.Length;
        for (var i = 0; i < a.Length && i < b.Length; i++)
        {
            diff |= a[i] ^ b[i];
        }

        return diff == 0;
#endif
    }
}
