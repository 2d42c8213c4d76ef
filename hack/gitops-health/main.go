// gitops-health judges Kubernetes objects the way GitOps tools do, with their own code:
//
//	gitops-health kstatus < objects.json      kstatus (sigs.k8s.io/cli-utils), as Flux and kpt
//	gitops-health lua health.lua < objects.json   an Argo CD health check: gopher-lua, the object
//	                                          as the global `obj`, base/table/string/math
//
// objects.json is a JSON array of objects; the answer is a JSON array of
// {"status": …, "message": …}, one per object. It exists so that Lorenz's conditions and
// the chart's health checks are tested by the libraries those tools embed, not a look-alike.
package main

import (
	"encoding/json"
	"fmt"
	"os"

	lua "github.com/yuin/gopher-lua"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
)

type health struct {
	Status  string `json:"status"`
	Message string `json:"message"`
}

func toLua(l *lua.LState, value interface{}) lua.LValue {
	switch v := value.(type) {
	case nil:
		return lua.LNil
	case bool:
		return lua.LBool(v)
	case float64:
		return lua.LNumber(v)
	case string:
		return lua.LString(v)
	case []interface{}:
		table := l.NewTable()
		for _, item := range v {
			table.Append(toLua(l, item))
		}
		return table
	case map[string]interface{}:
		table := l.NewTable()
		for key, item := range v {
			table.RawSetString(key, toLua(l, item))
		}
		return table
	default:
		panic(fmt.Sprintf("unsupported JSON value %T", value))
	}
}

func run(script string, object map[string]interface{}) (health, error) {
	l := lua.NewState(lua.Options{SkipOpenLibs: true})
	defer l.Close()
	for _, lib := range []struct {
		name string
		open lua.LGFunction
	}{
		{lua.BaseLibName, lua.OpenBase},
		{lua.TabLibName, lua.OpenTable},
		{lua.StringLibName, lua.OpenString},
		{lua.MathLibName, lua.OpenMath},
	} {
		l.Push(l.NewFunction(lib.open))
		l.Push(lua.LString(lib.name))
		l.Call(1, 0)
	}
	l.SetGlobal("obj", toLua(l, object))
	if err := l.DoString(script); err != nil {
		return health{}, err
	}
	table, ok := l.Get(-1).(*lua.LTable)
	if !ok {
		return health{}, fmt.Errorf("the script returned %s, not a table", l.Get(-1).Type())
	}
	return health{
		Status:  lua.LVAsString(table.RawGetString("status")),
		Message: lua.LVAsString(table.RawGetString("message")),
	}, nil
}

func kstatus(object []byte) (health, error) {
	var resource unstructured.Unstructured
	if err := resource.UnmarshalJSON(object); err != nil {
		return health{}, err
	}
	result, err := status.Compute(&resource)
	if err != nil {
		return health{}, err
	}
	return health{Status: result.Status.String(), Message: result.Message}, nil
}

func fail(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
	os.Exit(1)
}

func main() {
	if len(os.Args) < 2 || (os.Args[1] == "lua" && len(os.Args) != 3) {
		fmt.Fprintln(os.Stderr, "usage: gitops-health kstatus | gitops-health lua health.lua  (objects on stdin)")
		os.Exit(2)
	}
	var objects []json.RawMessage
	if err := json.NewDecoder(os.Stdin).Decode(&objects); err != nil {
		fail("objects: %v", err)
	}
	var script []byte
	if os.Args[1] == "lua" {
		var err error
		if script, err = os.ReadFile(os.Args[2]); err != nil {
			fail("%v", err)
		}
	}
	results := make([]health, 0, len(objects))
	for index, raw := range objects {
		var result health
		var err error
		if script != nil {
			var object map[string]interface{}
			if err = json.Unmarshal(raw, &object); err == nil {
				result, err = run(string(script), object)
			}
		} else {
			result, err = kstatus(raw)
		}
		if err != nil {
			fail("object %d: %v", index, err)
		}
		results = append(results, result)
	}
	if err := json.NewEncoder(os.Stdout).Encode(results); err != nil {
		fail("%v", err)
	}
}
