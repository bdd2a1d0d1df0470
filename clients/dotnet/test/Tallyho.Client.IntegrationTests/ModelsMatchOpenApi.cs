using System.Collections;
using System.Reflection;
using System.Text.Json;
using System.Text.Json.Serialization;
using Tallyho.Client.Callers;
using Tallyho.Client.Counters;
using Tallyho.Client.Gates;
using Tallyho.Client.Jobs;
using Tallyho.Client.Schedules;
using Tallyho.Client.Sequences;
using Tallyho.Client.Streams;

namespace Tallyho.Client.IntegrationTests;

/// <summary>
/// The .NET models are written by hand; this holds them to the OpenAPI document the app serves
/// (<c>/api/openapi.json</c> of the fixture's host). Every serialized property of every model must be a
/// property of its schema, of a compatible JSON type; a property the model declares non-nullable must be
/// one the server always sends and never sends as null (answers), and one the server requires must be
/// one the model can set (requests). Every public record of the library is in the table, or listed
/// as not an API shape, so a new model cannot escape the check.
/// </summary>
[Collection("devhost")]
public sealed class ModelsMatchOpenApi
{
    private enum Direction
    {
        Answer,
        Request,
    }

    /// <summary>Model → the schema it maps: a component name, then an optional path of property names (<c>[]</c>: an array's items).</summary>
    private static readonly (Type Model, string Schema, Direction Direction)[] Map =
    {
        // One model for both gate commands: Carried is the reset's (a release has none; it reads 0), see Absent.
        (typeof(NamedCaller), "Caller", Direction.Answer),
        (typeof(IssuedCaller), "CallerIssued", Direction.Answer),
        (typeof(CallerSelf), "CallerSelf", Direction.Answer),
        (typeof(CallerHoldings), "CallerSelf/holds", Direction.Answer),
        (typeof(CounterValue), "CounterValue", Direction.Answer),
        (typeof(CounterInfo), "Counter", Direction.Answer),
        (typeof(CounterSettings), "CounterSettingsRequest", Direction.Request),
        (typeof(GateState), "Gate", Direction.Answer),
        (typeof(GateWaiters), "GateWaiters", Direction.Answer),
        (typeof(GateAuditRecord), "GateAuditRecord", Direction.Answer),
        (typeof(UnreadableEntry), "GateList/unreadable/[]", Direction.Answer),
        (typeof(GateCommandResult), "GateReleaseResult", Direction.Answer),
        (typeof(GateCommandResult), "GateResetResult", Direction.Answer),
        (typeof(GateRun), "GateRun", Direction.Answer),
        (typeof(Job), "Job", Direction.Answer),
        (typeof(JobTotals), "Job/totals", Direction.Answer),
        (typeof(JobResult), "JobResult", Direction.Answer),
        (typeof(JobFailure), "JobFailure", Direction.Answer),
        (typeof(Lease), "Lease", Direction.Answer),
        (typeof(LeasedItem), "Lease/items/[]", Direction.Answer),
        (typeof(ItemResult), "LeaseCompletion/results/[]", Direction.Request),
        (typeof(Schedule), "Schedule", Direction.Answer),
        (typeof(ScheduleRun), "ScheduleRun", Direction.Answer),
        (typeof(ScheduleTrigger), "ScheduleTrigger", Direction.Answer),
        (typeof(ScheduleRequest), "CreateSchedule", Direction.Request),
        (typeof(SequenceInfo), "Sequence", Direction.Answer),
        (typeof(SequenceSettings), "SequenceSettingsInput", Direction.Request),
        (typeof(SequenceSettings), "Sequence/settings", Direction.Answer),
        (typeof(BlockSizeRange), "SequenceSettingsInput/blockSize", Direction.Request),
        (typeof(SequenceValidation), "SequenceValidation", Direction.Answer),
        (typeof(StreamAppendResult), "StreamAppendResult", Direction.Answer),
        (typeof(StreamRoute), "StreamRouteList/items/[]", Direction.Answer),
    };

    /// <summary>Properties a model has for another schema it maps, absent from this one: model, schema, JSON name.</summary>
    private static readonly HashSet<(Type, string, string)> Absent = new()
    {
        (typeof(GateCommandResult), "GateReleaseResult", "carried"),
    };

    /// <summary>Public records and classes of the library that are not API shapes, and why.</summary>
    private static readonly Dictionary<Type, string> NotApiShapes = new()
    {
        [typeof(SequenceNumber)] = "one element of SequenceNumbers' numbers and formatted arrays, paired by the client",
        [typeof(ScheduleTarget)] = "a builder of CreateSchedule's open target object",
        [typeof(TallyhoIssue)] = "an element of Problem's issues, read by TallyhoHttp",
        [typeof(GateReleaseFallback)] = "what the cached gate check reports when it answers without the service",
    };

    private readonly DevhostFixture _host;

    public ModelsMatchOpenApi(DevhostFixture host) => _host = host;

    [Fact]
    public async Task Every_model_property_is_in_its_schema_with_a_compatible_type_and_nullability()
    {
        using var http = new HttpClient();
        using var document = JsonDocument.Parse(await http.GetStringAsync(new Uri(_host.BaseAddress, "/api/openapi.json")));
        var schemas = document.RootElement.GetProperty("components").GetProperty("schemas");
        var nullability = new NullabilityInfoContext();

        var drift = new List<string>();
        foreach (var (model, path, direction) in Map)
        {
            var (properties, required) = ObjectShape(schemas, Resolve(schemas, path));
            var mapped = new HashSet<string>();
            foreach (var property in Serialized(model, direction))
            {
                var name = JsonName(property);
                mapped.Add(name);
                var where = $"{model.Name}.{property.Name} ({path}.{name})";
                if (Absent.Contains((model, path, name)))
                {
                    Assert.False(properties.ContainsKey(name), $"{where} is listed as absent, but the schema has it");
                    continue;
                }

                if (!properties.TryGetValue(name, out var propertySchema))
                {
                    drift.Add($"{where}: not in the schema");
                    continue;
                }

                propertySchema = Resolve(schemas, propertySchema);
                var types = JsonTypes(schemas, propertySchema);
                var expected = ClrJsonTypes(property.PropertyType);
                if (expected is not null && types.Count > 0 && !types.Overlaps(expected))
                {
                    drift.Add($"{where}: {property.PropertyType.Name} cannot hold JSON {string.Join("|", types)}");
                }

                var nullable = nullability.Create(property).ReadState != NullabilityState.NotNull;
                if (direction == Direction.Answer && !nullable && !required.Contains(name))
                {
                    drift.Add($"{where}: non-nullable, but the server may leave it out");
                }

                if (direction == Direction.Answer && !nullable && types.Contains("null"))
                {
                    drift.Add($"{where}: non-nullable, but the server may send null");
                }
            }

            if (direction == Direction.Request)
            {
                drift.AddRange(required.Where(name => !mapped.Contains(name)).Select(name => $"{model.Name}: cannot send {path}.{name}, which the server requires"));
            }
        }

        Assert.True(drift.Count == 0, "The .NET models drifted from /api/openapi.json:\n" + string.Join("\n", drift));
    }

    [Fact]
    public void Every_public_model_of_the_library_is_checked_or_named_as_not_an_api_shape()
    {
        var models = typeof(TallyhoClient).Assembly.GetExportedTypes()
            .Where(t => t.Namespace?.StartsWith("Tallyho.Client", StringComparison.Ordinal) == true)
            .Where(t => t.GetMethod("<Clone>$") is not null || (t.IsValueType && t.GetMethod("PrintMembers", BindingFlags.NonPublic | BindingFlags.Instance) is not null));
        var covered = Map.Select(m => m.Model).Concat(NotApiShapes.Keys).ToHashSet();

        Assert.Empty(models.Where(t => !covered.Contains(t)).Select(t => t.FullName));
    }

    /// <summary>What System.Text.Json writes of a request (public getters), and reads of an answer (public setters).</summary>
    private static IEnumerable<PropertyInfo> Serialized(Type model, Direction direction) =>
        model.GetProperties(BindingFlags.Public | BindingFlags.Instance)
            .Where(p => p.GetMethod?.IsPublic == true && (direction == Direction.Request || p.SetMethod?.IsPublic == true))
            .Where(p => p.GetCustomAttribute<JsonIgnoreAttribute>()?.Condition is not JsonIgnoreCondition.Always);

    private static string JsonName(PropertyInfo property) =>
        property.GetCustomAttribute<JsonPropertyNameAttribute>()?.Name ?? JsonNamingPolicy.CamelCase.ConvertName(property.Name);

    private static JsonElement Resolve(JsonElement schemas, string path)
    {
        var parts = path.Split('/');
        var schema = Resolve(schemas, schemas.GetProperty(parts[0]));
        foreach (var part in parts.Skip(1))
        {
            schema = Resolve(schemas, part == "[]" ? schema.GetProperty("items") : schema.GetProperty("properties").GetProperty(part));
        }

        return schema;
    }

    /// <summary>An object schema's properties and required names; a union of objects (<c>oneOf</c>/<c>anyOf</c>) has all its members' properties and the names every member requires.</summary>
    private static (Dictionary<string, JsonElement> Properties, HashSet<string> Required) ObjectShape(JsonElement schemas, JsonElement schema)
    {
        if (schema.TryGetProperty("properties", out var properties))
        {
            var required = schema.TryGetProperty("required", out var r) ? r.EnumerateArray().Select(e => e.GetString()!).ToHashSet() : new HashSet<string>();
            return (properties.EnumerateObject().ToDictionary(p => p.Name, p => p.Value), required);
        }

        var members = new[] { "oneOf", "anyOf" }
            .SelectMany(c => schema.TryGetProperty(c, out var alternatives) ? alternatives.EnumerateArray().ToArray() : Array.Empty<JsonElement>())
            .Select(a => Resolve(schemas, a))
            .Where(a => a.TryGetProperty("properties", out _) || a.TryGetProperty("oneOf", out _) || a.TryGetProperty("anyOf", out _))
            .Select(a => ObjectShape(schemas, a))
            .ToArray();
        Assert.NotEmpty(members);
        var all = new Dictionary<string, JsonElement>();
        foreach (var member in members)
        {
            foreach (var property in member.Properties)
            {
                all.TryAdd(property.Key, property.Value);
            }
        }

        var everywhere = members.Skip(1).Aggregate(new HashSet<string>(members[0].Required), (set, m) =>
        {
            set.IntersectWith(m.Required);
            return set;
        });
        return (all, everywhere);
    }

    /// <summary>Follows a <c>$ref</c>, and a nullable wrapper (<c>anyOf: [schema, {type: null}]</c>) to its object.</summary>
    private static JsonElement Resolve(JsonElement schemas, JsonElement schema)
    {
        if (schema.TryGetProperty("$ref", out var reference))
        {
            return Resolve(schemas, schemas.GetProperty(reference.GetString()!.Split('/').Last()));
        }

        if (!schema.TryGetProperty("properties", out _) && schema.TryGetProperty("anyOf", out var anyOf))
        {
            var alternatives = anyOf.EnumerateArray().ToArray();
            var notNull = alternatives.Where(a => !(a.TryGetProperty("type", out var t) && t.ValueKind == JsonValueKind.String && t.GetString() == "null")).ToArray();
            if (notNull.Length == 1 && alternatives.Length == 2)
            {
                var inner = Resolve(schemas, notNull[0]);
                if (inner.TryGetProperty("properties", out _))
                {
                    return inner;
                }
            }
        }

        return schema;
    }

    /// <summary>The JSON types a schema allows (empty: any).</summary>
    private static HashSet<string> JsonTypes(JsonElement schemas, JsonElement schema)
    {
        var types = new HashSet<string>();
        if (schema.TryGetProperty("type", out var type))
        {
            if (type.ValueKind == JsonValueKind.Array)
            {
                types.UnionWith(type.EnumerateArray().Select(t => t.GetString()!));
            }
            else
            {
                types.Add(type.GetString()!);
            }
        }

        if (schema.TryGetProperty("properties", out _))
        {
            types.Add("object");
        }

        foreach (var combinator in new[] { "anyOf", "oneOf" })
        {
            if (schema.TryGetProperty(combinator, out var alternatives))
            {
                foreach (var alternative in alternatives.EnumerateArray())
                {
                    var inner = JsonTypes(schemas, Resolve(schemas, alternative));
                    if (inner.Count == 0)
                    {
                        return new HashSet<string>();
                    }

                    types.UnionWith(inner);
                }
            }
        }

        if (schema.TryGetProperty("enum", out var values) && types.Count == 0)
        {
            types.UnionWith(values.EnumerateArray().Select(v => v.ValueKind switch
            {
                JsonValueKind.String => "string",
                JsonValueKind.Number => "number",
                JsonValueKind.True or JsonValueKind.False => "boolean",
                JsonValueKind.Null => "null",
                _ => "object",
            }));
        }

        return types;
    }

    /// <summary>The JSON types a CLR type reads and writes as; null for one that takes any JSON (<see cref="JsonElement"/>).</summary>
    private static HashSet<string>? ClrJsonTypes(Type type)
    {
        type = Nullable.GetUnderlyingType(type) ?? type;
        if (type == typeof(JsonElement) || type == typeof(object))
        {
            return null;
        }

        if (type == typeof(string) || type == typeof(DateTimeOffset) || type.IsEnum)
        {
            return new HashSet<string> { "string" };
        }

        if (type == typeof(bool))
        {
            return new HashSet<string> { "boolean" };
        }

        if (type == typeof(int) || type == typeof(long))
        {
            return new HashSet<string> { "integer" };
        }

        if (type == typeof(double) || type == typeof(decimal))
        {
            return new HashSet<string> { "number", "integer" };
        }

        if (type != typeof(string) && typeof(IEnumerable).IsAssignableFrom(type))
        {
            return type.IsGenericType && type.GetGenericTypeDefinition() == typeof(IReadOnlyDictionary<,>)
                ? new HashSet<string> { "object" }
                : new HashSet<string> { "array" };
        }

        return new HashSet<string> { "object" };
    }
}
