package sqlstore

import (
	"context"
	"fmt"

	"github.com/audiopost/audiopost/storage"
)

// CountJobs counts the jobs of the queue by state, for metrics
// (transport/httpapi.JobCounter). States without jobs are absent. It
// reads the state index only.
func (s *Store) CountJobs(ctx context.Context) (map[storage.JobState]int64, error) {
	rows, err := s.query(ctx, `SELECT state, COUNT(*) FROM jobs GROUP BY state`)
	if err != nil {
		return nil, s.wrap("count jobs", err)
	}
	defer rows.Close()
	out := map[storage.JobState]int64{}
	for rows.Next() {
		var (
			state string
			n     int64
		)
		if err := rows.Scan(&state, &n); err != nil {
			return nil, fmt.Errorf("sqlstore: count jobs: %w", err)
		}
		out[storage.JobState(state)] = n
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlstore: count jobs: %w", err)
	}
	return out, nil
}
