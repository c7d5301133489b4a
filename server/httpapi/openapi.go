package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/chime-scheduler/chime/api"
)

// The OpenAPI 3.0 document, as much of it as the route table needs.
type (
	openAPIDoc struct {
		OpenAPI    string                           `json:"openapi"`
		Info       openAPIInfo                      `json:"info"`
		Servers    []server                         `json:"servers"`
		Security   []map[string][]string            `json:"security"`
		Paths      map[string]map[string]*operation `json:"paths"`
		Components components                       `json:"components"`
	}
	server struct {
		URL string `json:"url"`
	}
	openAPIInfo struct {
		Title       string `json:"title"`
		Description string `json:"description"`
		Version     string `json:"version"`
	}
	components struct {
		Schemas         map[string]*schema         `json:"schemas"`
		Responses       map[string]*responseObject `json:"responses"`
		SecuritySchemes map[string]securityScheme  `json:"securitySchemes"`
	}
	securityScheme struct {
		Type   string `json:"type"`
		Scheme string `json:"scheme,omitempty"`
		In     string `json:"in,omitempty"`
		Name   string `json:"name,omitempty"`
	}
	operation struct {
		OperationID string                     `json:"operationId"`
		Summary     string                     `json:"summary"`
		Description string                     `json:"description,omitempty"`
		Tags        []string                   `json:"tags"`
		Parameters  []parameter                `json:"parameters,omitempty"`
		RequestBody *requestBody               `json:"requestBody,omitempty"`
		Responses   map[string]*responseObject `json:"responses"`
		// Security is the empty list on public operations, which
		// overrides the document's default.
		Security *[]map[string][]string `json:"security,omitempty"`
		// Role is the least role allowed to call the operation; empty for
		// public operations.
		Role api.Role `json:"x-chime-role,omitempty"`
	}
	parameter struct {
		Name        string  `json:"name"`
		In          string  `json:"in"`
		Description string  `json:"description,omitempty"`
		Required    bool    `json:"required,omitempty"`
		Schema      *schema `json:"schema"`
		// Explode is set for repeated query parameters.
		Explode *bool `json:"explode,omitempty"`
	}
	requestBody struct {
		Required bool                 `json:"required"`
		Content  map[string]mediaType `json:"content"`
	}
	responseObject struct {
		Ref         string               `json:"$ref,omitempty"`
		Description string               `json:"description,omitempty"`
		Headers     map[string]*header   `json:"headers,omitempty"`
		Content     map[string]mediaType `json:"content,omitempty"`
	}
	header struct {
		Description string  `json:"description,omitempty"`
		Schema      *schema `json:"schema"`
	}
	mediaType struct {
		Schema *schema `json:"schema"`
	}
	schema struct {
		Ref           string             `json:"$ref,omitempty"`
		Type          string             `json:"type,omitempty"`
		Format        string             `json:"format,omitempty"`
		Description   string             `json:"description,omitempty"`
		Enum          []string           `json:"enum,omitempty"`
		Minimum       *int               `json:"minimum,omitempty"`
		Maximum       *int               `json:"maximum,omitempty"`
		Default       any                `json:"default,omitempty"`
		Items         *schema            `json:"items,omitempty"`
		Properties    map[string]*schema `json:"properties,omitempty"`
		Required      []string           `json:"required,omitempty"`
		Pattern       string             `json:"pattern,omitempty"`
		Nullable      bool               `json:"nullable,omitempty"`
		OneOf         []*schema          `json:"oneOf,omitempty"`
		AllOf         []*schema          `json:"allOf,omitempty"`
		Discriminator *discriminator     `json:"discriminator,omitempty"`
		Example       any                `json:"example,omitempty"`
		// AdditionalProperties is a *schema, the values' schema of a
		// map, or false for an object that allows no other field.
		AdditionalProperties any `json:"additionalProperties,omitempty"`
	}
	discriminator struct {
		PropertyName string            `json:"propertyName"`
		Mapping      map[string]string `json:"mapping"`
	}
)

// openAPIJSON renders the OpenAPI document of routes.
func openAPIJSON(routes []route) ([]byte, error) {
	doc, err := buildOpenAPI(routes)
	if err != nil {
		return nil, err
	}
	return json.MarshalIndent(doc, "", "  ")
}

// buildOpenAPI describes routes as an OpenAPI 3.0 document. Schemas of the
// body types are generated from the api structs by reflection, named after
// their Go types.
func buildOpenAPI(routes []route) (*openAPIDoc, error) {
	b := &schemaBuilder{schemas: make(map[string]*schema)}
	doc := &openAPIDoc{
		OpenAPI: "3.0.3",
		Info: openAPIInfo{
			Title: "chime server API",
			Description: "Manage and watch chime's jobs, executions, calendars, nodes, alerts and users. " +
				"Every error is an Error with the HTTP status of its code.",
			Version: strings.TrimPrefix(api.Version, "/api/"),
		},
		Servers:  []server{{URL: "/"}},
		Security: authenticated(),
		Paths:    make(map[string]map[string]*operation),
		Components: components{
			Schemas: b.schemas,
			Responses: map[string]*responseObject{
				"Error": {
					Description: "An error: its code, a message and the field to blame.",
					Content:     map[string]mediaType{"application/json": {Schema: b.of(reflect.TypeFor[api.Error]())}},
				},
			},
			SecuritySchemes: map[string]securityScheme{
				"bearer":  {Type: "http", Scheme: "bearer"},
				"session": {Type: "apiKey", In: "cookie", Name: SessionCookie},
			},
		},
	}
	ids := make(map[string]bool)
	for i := range routes {
		rt := &routes[i]
		if ids[rt.operationID] {
			return nil, fmt.Errorf("operation ID %q used twice", rt.operationID)
		}
		ids[rt.operationID] = true
		op, err := b.operation(rt)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", rt.pattern(), err)
		}
		item := doc.Paths[rt.path]
		if item == nil {
			item = make(map[string]*operation)
			doc.Paths[rt.path] = item
		}
		method := strings.ToLower(rt.method)
		if item[method] != nil {
			return nil, fmt.Errorf("%s: route listed twice", rt.pattern())
		}
		item[method] = op
	}
	return doc, nil
}

// operation describes one route.
func (b *schemaBuilder) operation(rt *route) (*operation, error) {
	op := &operation{
		OperationID: rt.operationID,
		Summary:     rt.summary,
		Tags:        []string{tag(rt.path)},
		Responses:   make(map[string]*responseObject),
		Role:        rt.role,
	}
	security := authenticated()
	switch rt.role {
	case "":
		security = []map[string][]string{}
	case api.RoleExecutor:
		op.Description = "Needs a token of role executor that serves the executor's group."
	default:
		op.Description = "Needs role " + string(rt.role) + " or above."
	}
	op.Security = &security
	errStatuses := slices.Clone(rt.errors)
	for _, name := range pathWildcards(rt.path) {
		op.Parameters = append(op.Parameters, parameter{Name: name, In: "path", Required: true, Schema: &schema{Type: "string"}})
		errStatuses = append(errStatuses, http.StatusNotFound)
	}
	for _, p := range rt.query {
		op.Parameters = append(op.Parameters, queryParameter(p))
	}
	if rt.ifMatch {
		op.Parameters = append(op.Parameters, parameter{
			Name: "If-Match", In: "header", Schema: &schema{Type: "string"},
			Description: `The version the update expects, as the ETag a GET returned ("7"); 412 if the job has another.`,
		})
		errStatuses = append(errStatuses, http.StatusPreconditionFailed)
	}
	if rt.lastEventID {
		op.Parameters = append(op.Parameters, parameter{
			Name: "Last-Event-ID", In: "header", Schema: &schema{Type: "integer", Minimum: new(0)},
			Description: "The id (seq) of the last event received, sent by a reconnecting EventSource: the stream goes on after it.",
		})
	}
	if len(rt.query) > 0 || rt.ifMatch || rt.body != nil || rt.lastEventID {
		errStatuses = append(errStatuses, http.StatusBadRequest)
	}
	if rt.body != nil {
		op.RequestBody = &requestBody{
			Required: !rt.optionalBody,
			Content:  map[string]mediaType{"application/json": {Schema: b.of(reflect.TypeOf(rt.body))}},
		}
		errStatuses = append(errStatuses, http.StatusRequestEntityTooLarge)
	}
	if rt.role != "" {
		errStatuses = append(errStatuses, http.StatusUnauthorized, http.StatusForbidden)
	}
	if len(rt.responses) == 0 {
		return nil, fmt.Errorf("no success response")
	}
	for _, resp := range rt.responses {
		op.Responses[strconv.Itoa(resp.status)] = b.response(resp)
	}
	for _, status := range errStatuses {
		op.Responses[strconv.Itoa(status)] = &responseObject{Ref: "#/components/responses/Error"}
	}
	op.Responses["default"] = &responseObject{Ref: "#/components/responses/Error"}
	return op, nil
}

// response describes one success response.
func (b *schemaBuilder) response(resp response) *responseObject {
	obj := &responseObject{Description: http.StatusText(resp.status)}
	if resp.body != nil {
		ct := resp.contentType
		if ct == "" {
			ct = "application/json"
		}
		obj.Content = map[string]mediaType{ct: {Schema: b.of(reflect.TypeOf(resp.body))}}
	}
	if resp.etag {
		obj.Headers = map[string]*header{"ETag": {
			Description: `The job's version, quoted ("7"): send it back in If-Match.`,
			Schema:      &schema{Type: "string"},
		}}
	}
	return obj
}

// queryParameter describes one query parameter.
func queryParameter(p param) parameter {
	out := parameter{Name: p.name, In: "query", Description: p.description, Required: p.required}
	s := &schema{}
	switch p.typ {
	case paramInt:
		s.Type = "integer"
		s.Minimum, s.Maximum = &p.min, &p.max
		if p.def != 0 {
			s.Default = p.def
		}
	case paramBool:
		s.Type = "boolean"
	case paramTime:
		s.Type, s.Format = "string", "date-time"
	default:
		s.Type, s.Enum = "string", p.enum
	}
	out.Schema = s
	if p.repeated {
		explode := true
		out.Schema = &schema{Type: "array", Items: s}
		out.Explode = &explode
	}
	return out
}

// authenticated is the security requirement of a route that needs a
// caller: a bearer token or the session cookie.
func authenticated() []map[string][]string {
	return []map[string][]string{{"bearer": {}}, {"session": {}}}
}

// tag groups an operation by its path's first segment after the API
// version: "jobs", "executions"; probes are "operations".
func tag(path string) string {
	rest, ok := strings.CutPrefix(path, api.Version+"/")
	if !ok {
		return "operations"
	}
	first, _, _ := strings.Cut(rest, "/")
	return first
}

// pathWildcards lists the {wildcards} of a path in order.
func pathWildcards(path string) []string {
	var names []string
	for seg := range strings.SplitSeq(path, "/") {
		if name, ok := strings.CutPrefix(seg, "{"); ok {
			names = append(names, strings.TrimSuffix(name, "}"))
		}
	}
	return names
}

// schemaBuilder generates JSON schemas of Go types, keeping each struct
// once under components/schemas.
type schemaBuilder struct {
	schemas map[string]*schema
}

// of returns the schema of t: a $ref for structs, inline otherwise. It
// panics on a type JSON cannot carry, a programming error the tests catch.
func (b *schemaBuilder) of(t reflect.Type) *schema {
	switch t {
	case reflect.TypeFor[time.Time]():
		return &schema{Type: "string", Format: "date-time"}
	case reflect.TypeFor[json.RawMessage]():
		return &schema{Description: "Any JSON value."}
	}
	switch t.Kind() {
	case reflect.Pointer:
		return b.of(t.Elem())
	case reflect.Struct:
		name := t.Name()
		if _, ok := b.schemas[name]; !ok {
			b.schemas[name] = &schema{} // placeholder: a struct may refer to itself
			b.schemas[name] = b.object(t)
		}
		return &schema{Ref: "#/components/schemas/" + name}
	case reflect.Slice, reflect.Array:
		return &schema{Type: "array", Items: b.of(t.Elem())}
	case reflect.Map:
		return &schema{Type: "object", AdditionalProperties: b.of(t.Elem())}
	case reflect.Interface:
		return &schema{}
	case reflect.String:
		return &schema{Type: "string", Enum: enumValues(t)}
	case reflect.Bool:
		return &schema{Type: "boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Uint8, reflect.Uint16, reflect.Uint32:
		return &schema{Type: "integer", Format: "int32"}
	case reflect.Int64, reflect.Uint, reflect.Uint64:
		return &schema{Type: "integer", Format: "int64"}
	case reflect.Float32, reflect.Float64:
		return &schema{Type: "number"}
	}
	panic("httpapi: no JSON schema for " + t.String())
}

// object is the schema of a struct: its JSON fields as properties, those
// without omitempty required.
func (b *schemaBuilder) object(t reflect.Type) *schema {
	s := &schema{Type: "object", Properties: make(map[string]*schema)}
	for f := range t.Fields() {
		if !f.IsExported() {
			continue
		}
		tagValue := f.Tag.Get("json")
		if tagValue == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tagValue, ",")
		if name == "" {
			name = f.Name
		}
		if typed := b.rawField(t, f); typed != nil {
			s.Properties[name] = typed
		} else {
			s.Properties[name] = b.of(f.Type)
		}
		if !slices.Contains(strings.Split(opts, ","), "omitempty") {
			s.Required = append(s.Required, name)
		}
	}
	return s
}

// enumValues lists the values of the api's enumerated string types.
func enumValues(t reflect.Type) []string {
	var values []string
	switch t {
	case reflect.TypeFor[api.Role]():
		for _, v := range []api.Role{api.RoleViewer, api.RoleOperator, api.RoleAdmin} {
			values = append(values, string(v))
		}
	case reflect.TypeFor[api.Overlap]():
		for _, v := range []api.Overlap{api.OverlapAllow, api.OverlapSkip, api.OverlapQueue, api.OverlapCancel} {
			values = append(values, string(v))
		}
	case reflect.TypeFor[api.ErrorCode]():
		for _, v := range []api.ErrorCode{
			api.CodeInvalidArgument, api.CodeUnauthenticated, api.CodePermissionDenied, api.CodeNotFound,
			api.CodeConflict, api.CodeVersionMismatch, api.CodeTooLarge, api.CodeRateLimited,
			api.CodeInternal, api.CodeUnavailable,
		} {
			values = append(values, string(v))
		}
	}
	return values
}
