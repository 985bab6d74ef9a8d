-- Applied by sqlx::migrate! in tests/sqlx.
CREATE TABLE people (
    id BIGINT PRIMARY KEY AUTO_INCREMENT,
    name VARCHAR(40) NOT NULL,
    team_id BIGINT NULL
);
