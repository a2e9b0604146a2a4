package main

import "testing"

func TestAnRPCCommentsFirstParagraphIsTheSummaryAndTheRestTheDescription(t *testing.T) {
	for _, tc := range []struct {
		name, text, summary, description string
	}{
		{"summary only", " Read a tenant.\n", "Read a tenant.", ""},
		{"two paragraphs", " Read a tenant\n (route 5).\n\n The tenant with\n its users.\n", "Read a tenant (route 5).", "The tenant with its users."},
		{"three paragraphs", " A.\n\n B.\n\n\n C.\n", "A.", "B.\n\nC."},
		{"no comment", "", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := splitComment(tc.text)
			if got.summary != tc.summary || got.description != tc.description {
				t.Errorf("splitComment(%q) = %+v, want summary %q, description %q", tc.text, got, tc.summary, tc.description)
			}
		})
	}
}
