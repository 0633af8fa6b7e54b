package engine

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/recallhq/recall/engine/model"
)

// Every field of a session comes back out of the table as it went in: a
// field added to model.Session and not packed fails here.
func TestSessionTableKeepsEveryField(t *testing.T) {
	var want []model.Session
	for i := range 3 {
		var s model.Session
		v := reflect.ValueOf(&s).Elem()
		for f := range v.NumField() {
			switch fv := v.Field(f); fv.Kind() {
			case reflect.String:
				if i != 1 { // one session of empty strings
					fv.SetString(fmt.Sprintf("%s-%d-é", v.Type().Field(f).Name, i))
				}
			case reflect.Int64:
				fv.SetInt(int64(1000*i + f))
			default:
				t.Fatalf("model.Session.%s: a %s, which sessionTable does not pack", v.Type().Field(f).Name, fv.Kind())
			}
		}
		want = append(want, s)
	}
	var tab sessionTable
	tab.grow(1, 4) // less than needed: add grows on
	for i := range want {
		tab.add(&want[i], fmt.Sprint("root", i), fmt.Sprint("stamp", i))
	}
	if tab.len() != len(want) {
		t.Fatalf("len %d, want %d", tab.len(), len(want))
	}
	for i := range want {
		if got := tab.session(i); *got != want[i] {
			t.Errorf("session %d:\n got %+v\nwant %+v", i, *got, want[i])
		}
		if got := tab.str(i, strRoot); got != fmt.Sprint("root", i) {
			t.Errorf("session %d: root %q", i, got)
		}
		if got := tab.str(i, strStamp); got != fmt.Sprint("stamp", i) {
			t.Errorf("session %d: stamp %q", i, got)
		}
	}
}

// The table is what a cold sync holds for its whole length: its records
// hold no pointers, so the collector does not scan them.
func TestSessionRecordHoldsNoPointers(t *testing.T) {
	var walk func(reflect.Type) bool
	walk = func(ty reflect.Type) bool {
		switch ty.Kind() {
		case reflect.Int, reflect.Int64, reflect.Uint32, reflect.Uint8:
			return true
		case reflect.Array:
			return walk(ty.Elem())
		case reflect.Struct:
			for i := range ty.NumField() {
				if !walk(ty.Field(i).Type) {
					return false
				}
			}
			return true
		}
		return false
	}
	if !walk(reflect.TypeOf(sessionRec{})) {
		t.Fatal("sessionRec holds a pointer (or a kind this test does not know)")
	}
}

// packTodo puts the sessions oldest first, sessions created at the same
// time in the order given, each with its own root and stamp.
func TestPackTodoOldestFirst(t *testing.T) {
	todo := []*model.Session{{ID: "c", Created: 30}, {ID: "a", Created: 10}, {ID: "b1", Created: 20}, {ID: "b2", Created: 20}}
	tab := packTodo(todo, func(s *model.Session) string { return "r-" + s.ID }, map[string]string{"a": "sa", "b2": "sb2"})
	var got []string
	for i := range tab.len() {
		got = append(got, tab.str(i, strID)+"/"+tab.str(i, strRoot)+"/"+tab.str(i, strStamp))
	}
	want := []string{"a/r-a/sa", "b1/r-b1/", "b2/r-b2/sb2", "c/r-c/"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}
