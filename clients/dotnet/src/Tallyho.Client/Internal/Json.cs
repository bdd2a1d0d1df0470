using System.Text.Json;
using System.Text.Json.Serialization;

namespace Tallyho.Client.Internal;

internal static class Json
{
    /// <summary>camelCase names, as the API speaks; nulls left out of request bodies.</summary>
    public static readonly JsonSerializerOptions Options = new(JsonSerializerDefaults.Web)
    {
        DefaultIgnoreCondition = JsonIgnoreCondition.WhenWritingNull,
    };

    public static byte[] Serialize<T>(T value) => JsonSerializer.SerializeToUtf8Bytes(value, Options);

    public static T Deserialize<T>(byte[] utf8, string what) =>
        JsonSerializer.Deserialize<T>(utf8, Options) ?? throw new TallyhoException(200, "InvalidResponse", $"The server answered {what} with null.");
}
