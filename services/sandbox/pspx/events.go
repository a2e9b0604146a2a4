package pspx

import (
	"encoding/json"
	"slices"
)

func (s *Server) listEvents(c *call) (any, *apiError) {
	typ, hasType := c.p.str("type")
	var all []*event
	for _, e := range slices.Backward(c.a.events) {
		if !hasType || e.typ == typ {
			all = append(all, e)
		}
	}
	page, more, err := pageOf(c, all, func(e *event) string { return e.id }, "event")
	if perr := c.p.done(); perr != nil {
		return nil, perr
	}
	if err != nil {
		return nil, err
	}
	data := make([]json.RawMessage, len(page))
	for i, e := range page {
		data[i] = e.body
	}
	return listJSON{Object: "list", Data: data, HasMore: more, URL: "/v1/events"}, nil
}

func (s *Server) getEvent(c *call) (any, *apiError) {
	if err := c.p.done(); err != nil {
		return nil, err
	}
	id := c.r.PathValue("id")
	for _, e := range c.a.events {
		if e.id == id {
			return json.RawMessage(e.body), nil
		}
	}
	return nil, errNoSuch("event", id, "id")
}
