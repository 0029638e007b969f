package mqtt

import (
	"encoding/json"
	"regexp"
	"runtime/debug"
)

// Outcomes lists every outcome a result can have (the contract's outcome
// values of all systems): the event types of the Home Assistant event.
var Outcomes = []string{
	"rolled", "success", "failure", "hit", "miss", "pass", "fail",
	"perfect", "minor", "failed", "critical_success", "catastrophic_failure",
}

var unsafeID = regexp.MustCompile(`[^A-Za-z0-9_-]`)

// discoveryMessages are the retained Home Assistant MQTT discovery configs
// of one tower: a device with a last-result sensor (the total, the result as
// attributes), an event entity firing the outcome, and a button sending the
// default roll, all available while the tower's status is online.
func discoveryMessages(cfg Config) []message {
	t := cfg.topics()
	node := "towerd_" + unsafeID.ReplaceAllString(cfg.TowerID, "_")
	version := "devel"
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		version = bi.Main.Version
	}
	device := map[string]any{
		"identifiers":  []string{node},
		"name":         cfg.HomeAssistant.Name,
		"manufacturer": "towerd",
		"model":        "Dice tower",
		"sw_version":   version,
	}
	origin := map[string]any{"name": "towerd", "sw_version": version}
	common := func(name, id string) map[string]any {
		return map[string]any{
			"name":               name,
			"unique_id":          node + "_" + id,
			"availability_topic": t.status,
			"device":             device,
			"origin":             origin,
			"qos":                1,
		}
	}

	sensor := common("Last result", "last_result")
	sensor["state_topic"] = t.result
	sensor["value_template"] = "{{ value_json.total }}"
	sensor["json_attributes_topic"] = t.result
	sensor["icon"] = "mdi:dice-multiple"

	event := common("Outcome", "outcome")
	event["state_topic"] = t.result
	event["event_types"] = Outcomes
	// Home Assistant ignores retained replays for events, so only new
	// results fire.
	event["value_template"] = "{{ {'event_type': value_json.outcome, 'total': value_json.total, " +
		"'text': value_json.text, 'id': value_json.id | default(''), 'seq': value_json.seq} | to_json }}"
	event["icon"] = "mdi:dice-d20"

	button := common("Roll", "roll")
	button["command_topic"] = t.roll
	button["payload_press"] = cfg.HomeAssistant.DefaultRoll
	button["retain"] = false
	button["icon"] = "mdi:dice-5"

	p := cfg.HomeAssistant.Prefix
	out := []message{}
	for _, d := range []struct {
		component, object string
		config            map[string]any
	}{
		{"sensor", "last_result", sensor},
		{"event", "outcome", event},
		{"button", "roll", button},
	} {
		b, _ := json.Marshal(d.config)
		out = append(out, message{topic: p + "/" + d.component + "/" + node + "/" + d.object + "/config", qos: 1, retain: true, payload: b})
	}
	return out
}
