"""The scanner page used at the entrance (`/scan`): plain HTML, CSS and JavaScript, served
by the museum service as they are, with no build step and nothing fetched from elsewhere."""
