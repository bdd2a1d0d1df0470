using System.Globalization;
using Tallyho.Client.Internal;

namespace Tallyho.Client.Sequences;

/// <summary>
/// The sequence number format, computed locally: prefix, zero-padded digits, <c>-</c> and a Damm check digit.
/// The Damm digit catches every single-digit error and every swap of adjacent digits.
/// </summary>
public static class SequenceFormat
{
    /// <summary>The largest number a sequence issues (2^53 - 1, the server's safe-integer limit).</summary>
    public const long MaxValue = 9_007_199_254_740_991;

    private static readonly byte[,] Table =
    {
        { 0, 3, 1, 7, 5, 9, 8, 6, 4, 2 },
        { 7, 0, 9, 2, 1, 5, 4, 8, 6, 3 },
        { 4, 2, 0, 6, 8, 7, 1, 3, 5, 9 },
        { 1, 7, 5, 0, 9, 8, 3, 4, 2, 6 },
        { 6, 1, 2, 3, 0, 4, 5, 9, 7, 8 },
        { 3, 6, 7, 4, 2, 0, 9, 5, 8, 1 },
        { 5, 8, 6, 9, 7, 2, 0, 1, 3, 4 },
        { 8, 9, 4, 5, 3, 6, 2, 0, 1, 7 },
        { 9, 4, 3, 8, 6, 1, 7, 2, 0, 5 },
        { 2, 5, 8, 1, 4, 3, 6, 7, 9, 0 },
    };

    /// <summary>The Damm check digit of a string of decimal digits.</summary>
    /// <param name="digits">Decimal digits only.</param>
    /// <returns>The check digit, 0-9.</returns>
    /// <exception cref="ArgumentException">A character is not a decimal digit.</exception>
    public static int CheckDigit(string digits)
    {
        Guard.NotNull(digits, nameof(digits));

        var interim = 0;
        foreach (var c in digits)
        {
            if (c < '0' || c > '9')
            {
                throw new ArgumentException("Only decimal digits have a check digit.", nameof(digits));
            }

            interim = Table[interim, c - '0'];
        }

        return interim;
    }

    /// <summary>Writes <paramref name="value"/> the way a sequence with these settings does.</summary>
    /// <param name="settings">The sequence's settings (unset ones take the server's defaults).</param>
    /// <param name="value">The number.</param>
    /// <returns>E.g. <c>ORD-0012345-9</c>.</returns>
    public static string Format(SequenceSettings settings, long value)
    {
        Guard.NotNull(settings, nameof(settings));

        var digits = value.ToString(CultureInfo.InvariantCulture).PadLeft(settings.Width ?? 7, '0');
        var prefix = settings.Prefix ?? string.Empty;
        return settings.CheckDigit ?? true ? $"{prefix}{digits}-{CheckDigit(digits)}" : prefix + digits;
    }

    /// <summary>
    /// Checks a typed-in number against a sequence's settings, as the server's validate endpoint does:
    /// the prefix (either letter case), digits in canonical form, the check digit, and a value the sequence can issue.
    /// </summary>
    /// <param name="settings">The sequence's settings (unset ones take the server's defaults).</param>
    /// <param name="text">What was typed.</param>
    /// <returns>Valid with the number, or not valid with the reason.</returns>
    public static SequenceValidation Validate(SequenceSettings settings, string text)
    {
        Guard.NotNull(settings, nameof(settings));

        Guard.NotNull(text, nameof(text));

        var prefix = settings.Prefix ?? string.Empty;
        var width = settings.Width ?? 7;
        var start = settings.Start ?? 1;
        if (text.Length < prefix.Length || !string.Equals(text.Substring(0, prefix.Length), prefix, StringComparison.OrdinalIgnoreCase))
        {
            return Invalid($"does not start with the prefix \"{prefix}\"");
        }

        var digits = text.Substring(prefix.Length);
        string? check = null;
        if (settings.CheckDigit ?? true)
        {
            var dash = digits.LastIndexOf('-');
            if (dash < 0 || dash != digits.Length - 2)
            {
                return Invalid("has no check digit (expected \"-\" and one digit at the end)");
            }

            check = digits.Substring(dash + 1);
            digits = digits.Substring(0, dash);
        }

        if (digits.Length == 0 || !digits.All(c => c >= '0' && c <= '9'))
        {
            return Invalid("the number part must be digits only");
        }

        if (check is not null && (check[0] < '0' || check[0] > '9'))
        {
            return Invalid("the check digit must be a digit");
        }

        if (digits.Length < width)
        {
            return Invalid($"has {digits.Length} digits; numbers of this sequence have at least {width}");
        }

        if (digits.Length > width && digits[0] == '0')
        {
            return Invalid($"has leading zeros beyond the width of {width}");
        }

        if (check is not null && CheckDigit(digits) != check[0] - '0')
        {
            return Invalid("the check digit is wrong");
        }

        if (digits.Length > 16 || !long.TryParse(digits, NumberStyles.None, CultureInfo.InvariantCulture, out var value) || value > MaxValue)
        {
            return Invalid("is larger than any number a sequence issues");
        }

        return value < start ? Invalid($"is below the first number of this sequence ({start})") : new SequenceValidation(true, value);
    }

    private static SequenceValidation Invalid(string reason) => new(false, null, reason);
}
